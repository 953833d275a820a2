# %% [markdown]
# # Exploring the support-ticket corpus with a legacy LlamaIndex ReActAgent
# Notebook exported as a script; cells run top to bottom by one analyst.

# %%
from llama_index.core import SimpleDirectoryReader, VectorStoreIndex
from llama_index.core.agent import ReActAgent
from llama_index.core.tools import QueryEngineTool
from llama_index.llms.openai import OpenAI

docs = SimpleDirectoryReader("./data/tickets").load_data()
index = VectorStoreIndex.from_documents(docs)

# %%
tickets_tool = QueryEngineTool.from_defaults(
    query_engine=index.as_query_engine(similarity_top_k=5),
    name="tickets",
    description="Search past support tickets.",
)
agent = ReActAgent.from_tools([tickets_tool], llm=OpenAI(model="gpt-4o"), verbose=True)

# %%
response = agent.chat("What are the three most common causes of failed payments?")
print(response)

# %%
follow_up = agent.chat("For the first cause, which product versions are affected?")
print(follow_up)

# %%
agent.reset()
for question in ["How many tickets mention refunds?", "Which customers escalated twice?"]:
    print(question, "->", agent.chat(question))
