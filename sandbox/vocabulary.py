"""The words records are made of: shopper phrases, product categories, competitors' ASINs.

Keywords, search terms, bullet points and cluster names all draw from the same vocabulary, so a
search term reads like the keyword it matched and a cluster like the products in it.
"""

_VOCABULARY = (
    "organic green tea coffee mug bottle steel bamboo travel kids yoga mat lamp desk led "
    "wireless charger cable case leather wallet running shoes socks cotton towel kitchen knife "
    "garden hose dog toy cat bed baby blanket phone stand camera bag backpack water filter glass "
    "jar candle soap shampoo brush storage box shelf chair pillow sheet large small premium gift "
    "women men outdoor waterproof portable reusable"
)
WORDS = tuple(_VOCABULARY.split())
CATEGORIES = (
    "Kitchen & Dining",
    "Sports & Outdoors",
    "Home & Garden",
    "Toys & Games",
    "Electronics",
    "Beauty",
    "Pet Supplies",
    "Office Products",
)


def phrase(bits: int, words: int = 2) -> str:
    """A shopper-like phrase of 2 or 3 vocabulary words drawn from a 64-bit hash."""
    count = words + (bits >> 60) % 2
    return " ".join(WORDS[(bits >> (12 * k)) % len(WORDS)] for k in range(count))


def competitor_asin(bits: int) -> str:
    return "B0" + format(bits % 36**8, "08X")[-8:]
