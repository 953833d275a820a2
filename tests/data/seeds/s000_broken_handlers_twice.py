# seed 000, BAD: repeated handler registration on a long-lived object
from llama_index.llms.openai import OpenAI
llm = OpenAI(model="gpt-4o-mini")
handler = MyHandler()
llm.callback_manager.add_handler(handler)
llm.callback_manager.add_handler(handler)  # error: DUP402
