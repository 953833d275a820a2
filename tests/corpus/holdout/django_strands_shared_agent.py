"""Django views for the warehouse assistant.

The assistant answers stock questions and can place restock orders.
"""
import json

from django.http import JsonResponse, HttpRequest
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from openai import OpenAI
from strands import Agent, tool
from strands.models.openai import OpenAIModel

from inventory.models import Product, RestockOrder

summary_client = OpenAI()


@tool
def stock_level(sku: str) -> int:
    """Return the units on hand for a SKU."""
    return Product.objects.get(sku=sku).on_hand


@tool
def place_restock(sku: str, quantity: int) -> str:
    """Create a restock order with the supplier."""
    order = RestockOrder.objects.create(product=Product.objects.get(sku=sku), quantity=quantity)
    return f"order {order.pk} placed"


MODEL = OpenAIModel(model_id="gpt-4o-mini")
warehouse_agent = Agent(
    model=MODEL,
    tools=[stock_level, place_restock],
    system_prompt="You help warehouse staff. Only restock when asked explicitly.",
)


@csrf_exempt
@require_POST
def ask(request: HttpRequest) -> JsonResponse:
    body = json.loads(request.body)
    question = body.get("question", "").strip()
    if not question:
        return JsonResponse({"error": "empty question"}, status=400)
    result = warehouse_agent(question)
    return JsonResponse({"answer": str(result)})


@require_POST
def summarize_orders(request: HttpRequest) -> JsonResponse:
    orders = list(RestockOrder.objects.order_by("-created")[:20].values("product__sku", "quantity"))
    completion = summary_client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[
            {"role": "system", "content": "Summarise these restock orders in two sentences."},
            {"role": "user", "content": json.dumps(orders)},
        ],
    )
    return JsonResponse({"summary": completion.choices[0].message.content})
