"""Gradio demo: a pydantic-ai agent answering questions about a recipe database."""
import gradio as gr
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ModelMessage

from recipes.db import RecipeDB

db = RecipeDB.from_env()

chef = Agent(
    "openai:gpt-4o-mini",
    deps_type=RecipeDB,
    system_prompt="You suggest recipes from the database. Never invent recipes.",
)


@chef.tool
def search_recipes(ctx: RunContext[RecipeDB], ingredient: str) -> list[str]:
    """Find recipe titles that use an ingredient."""
    return ctx.deps.search(ingredient)


@chef.tool
def recipe_details(ctx: RunContext[RecipeDB], title: str) -> dict:
    """Full recipe with steps."""
    return ctx.deps.get(title)


def respond(message: str, chat: list, history: list[ModelMessage] | None):
    result = chef.run_sync(message, deps=db, message_history=history or [])
    chat = chat + [(message, result.output)]
    return "", chat, result.all_messages()


with gr.Blocks(title="Recipe helper") as demo:
    chatbot = gr.Chatbot()
    box = gr.Textbox(placeholder="What can I cook with leeks?")
    state = gr.State(None)
    box.submit(respond, inputs=[box, chatbot, state], outputs=[box, chatbot, state])

if __name__ == "__main__":
    demo.queue(default_concurrency_limit=8).launch()
