"""Batch script: answer a CSV of analyst questions with one smolagents agent, sequentially.

Run as `python clean_smolagents_cli_script.py questions.csv answers.csv`.
"""
import csv
import sys

from smolagents import CodeAgent, DuckDuckGoSearchTool, LiteLLMModel, VisitWebpageTool

model = LiteLLMModel(model_id="anthropic/claude-3-5-sonnet-latest")
agent = CodeAgent(
    tools=[DuckDuckGoSearchTool(), VisitWebpageTool()],
    model=model,
    max_steps=8,
    additional_authorized_imports=["pandas"],
)


def load_questions(path: str) -> list[dict]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def main(src: str, dst: str) -> None:
    rows = load_questions(src)
    with open(dst, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=["id", "question", "answer"])
        writer.writeheader()
        for row in rows:
            answer = agent.run(row["question"], reset=True)
            writer.writerow({"id": row["id"], "question": row["question"], "answer": answer})
            print(f"{row['id']}: done", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
