# Case from a public application, rewritten in our own words (no code copied):
# nick0918964388/smolagent, gradio-smolagent.py (commit 216cc34e14792269cfa75f2d661cc4abf1b9f78b):
# a CodeAgent with an image-generation tool is handed to smolagents' GradioUI, which puts that one
# object in every browser session and runs it without resetting its memory
# (huggingface/smolagents#703): every visitor continues the previous visitors' conversation.
# The helper below builds a fresh agent per call and is fine.
from smolagents import CodeAgent, GradioUI, InferenceClientModel, load_tool

painter_tool = load_tool("example-org/text-to-image", trust_remote_code=True)
model = InferenceClientModel("Qwen/Qwen2.5-Coder-32B-Instruct")

painter = CodeAgent(tools=[painter_tool], model=model)


def one_off(prompt: str) -> str:
    scratch = CodeAgent(tools=[painter_tool], model=model)
    return str(scratch.run(prompt))


GradioUI(painter).launch()
