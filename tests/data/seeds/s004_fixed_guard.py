# seed 004, the fix applied in application code: one invocation at a time per agent
import threading
from dupguard.runtime import InvocationGuard
from strands import Agent
agent = Agent()
guard = InvocationGuard(mode="throw")
def invoke(prompt):
    with guard.hold():
        return agent(prompt)
def invoke_concurrently(prompts):
    threads = [threading.Thread(target=invoke, args=(p,)) for p in prompts]
    for t in threads:
        t.start()
