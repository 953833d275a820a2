# Near-miss from a public application, rewritten in our own words (no code copied):
# scalasm/strands-a2a-demo, coordinator_agent.py (commit deebca0af77549b1f472758029e8911df579bc6b):
# the coordinator creates an A2A client for a worker on first use across an await, without a
# lock. Two racing delegations can build two clients, but a client is a stateless HTTP handle
# built from the worker's card: the extra one is simply dropped (DUP205 near-miss).
import httpx
from a2a.client import A2AClient
from strands import Agent, tool


class Delegator:
    def __init__(self, workers: dict[str, str]):
        self.workers = workers
        self.http = httpx.AsyncClient(timeout=60)
        self.worker_clients: dict[str, A2AClient] = {}

    async def client_for(self, worker: str) -> A2AClient:
        if worker not in self.worker_clients:
            self.worker_clients[worker] = await A2AClient.get_client_from_agent_card_url(
                self.http, self.workers[worker]
            )
        return self.worker_clients[worker]

    async def ask(self, worker: str, text: str) -> str:
        client = await self.client_for(worker)
        response = await client.send_message(text)
        return str(response)


def build_planner(delegator: Delegator) -> Agent:
    @tool
    async def ask_worker(worker: str, text: str) -> str:
        """Ask one of the worker agents."""
        return await delegator.ask(worker, text)

    return Agent(system_prompt="Plan the trip with the workers.", tools=[ask_worker])
