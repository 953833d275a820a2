# seed 004: parallel invocations to the same Agent instance corrupt message history
# ("Integration test with real threading ... invoke agent concurrently")
import threading
from strands import Agent
agent = Agent()
def invoke_concurrently(prompts):
    threads = [threading.Thread(target=agent, args=(p,)) for p in prompts]  # error: DUP202
    for t in threads:
        t.start()
