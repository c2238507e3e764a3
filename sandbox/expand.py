"""`expand` of related fields on the sandbox's cursor lists and item endpoints (spec 2.1, 4.1, 8).

A related field (`connection`, `country`, `brand`, `campaign`, `adGroup` …) holds an identifier;
`expand[]=<field>` puts the related record there instead, as that record's own item endpoint
returns it. Dot notation expands inside the expanded record (`campaign.connection`), up to four
levels (spec 8); a longer path, or one with an empty name, is a 400 naming `expand`.

How the sandbox fills what the spec leaves open:

- the expand name is the field's own name, whatever it holds: `portfolioId` (a campaign's
  portfolio) expands to the portfolio record, the change log's lowercase `adgroup` to the ad
  group record;
- arrays of identifiers expand element by element: a connection's `countries` to
  `{id, code, name, marketplaceId}` (exactly the shape spec 2.8 gives), a cluster's `products`
  to product records; a single `country` field expands to the country record as
  `/v1/countries/{id}` returns it;
- a name that matches no related field of the record is ignored (like a `fields` key that
  matches no entity, spec 4.1), and so is a null field; an identifier that names no record of
  the account stays an identifier;
- the special expands keep their meaning: `optimizationConfig` on a campaign (also nested,
  `campaign.optimizationConfig`), `salesRanks` and `customerFeedback` on listings (top level,
  handled where the listing is rendered).

Expanding copies the records it changes: the account's cached records are never modified.
"""

from sandbox.assembly import Account
from sandbox.errors import bad_param
from sandbox.params import Query
from sandbox.reference import COUNTRY_BY_ID, Country
from sandbox.spec import EXPAND_DEPTH

Tree = dict[str, "Tree"]

# Related field → the account's list holding the records it names ("countries" is reference data).
RELATED = {
    "connection": "connections",
    "country": "countries",
    "brand": "brands",
    "campaign": "campaigns",
    "adGroup": "adgroups",
    "adgroup": "adgroups",  # the change log's spelling
    "product": "products",
    "target": "targets",
    "portfolioId": "portfolios",
}
# Fields holding an array of identifiers, expanded element by element.
RELATED_MANY = {"countries": "countries", "products": "products"}


def country_record(country: Country) -> dict:
    """A country as `/v1/countries/{id}` returns it (spec 2.8)."""
    return {
        "object": "country",
        "id": country.id,
        "code": country.code,
        "name": country.name,
        "marketplaceId": country.marketplace_id,
    }


def country_summary(country: Country) -> dict:
    """An element of an expanded `countries` array: `{id, code, name, marketplaceId}` (2.8)."""
    record = country_record(country)
    del record["object"]
    return record


def expand_tree(query: Query) -> Tree:
    """The requested paths as a tree: `campaign.connection` → {campaign: {connection: {}}}.

    Raises the spec's 400 (`parameter_invalid`, param `expand`) on a path deeper than four
    levels or with an empty name, whatever the endpoint, so the limit holds everywhere.
    """
    tree: Tree = {}
    for path in query.all("expand"):
        names = path.split(".")
        if len(names) > EXPAND_DEPTH:
            raise bad_param("expand", f"expand nests at most {EXPAND_DEPTH} levels; got {path!r}.")
        if not all(names):
            raise bad_param("expand", f"expand must be names separated by dots; got {path!r}.")
        node = tree
        for name in names:
            node = node.setdefault(name, {})
    return tree


def expand_page(account: Account, query: Query, page: dict) -> dict:
    """A cursor list's page with each record's related fields expanded as asked."""
    tree = expand_tree(query)
    if tree:
        page["data"] = [expand_record(account, r, tree) for r in page["data"]]
    return page


def expand_item(account: Account, query: Query, record: dict) -> dict:
    """One record of an item endpoint with its related fields expanded as asked."""
    return expand_record(account, record, expand_tree(query))


def expand_record(account: Account, record: dict, tree: Tree) -> dict:
    """The record with every related field named in `tree` replaced by its record (a copy)."""
    out = record
    for name, below in tree.items():
        value = record.get(name)
        if name in RELATED and isinstance(value, str):
            found = _related(account, RELATED[name], value, below, summary=False)
            expanded = value if found is None else found
        elif name in RELATED_MANY and isinstance(value, list):
            attribute = RELATED_MANY[name]
            found = [_related(account, attribute, v, below, summary=True) for v in value]
            expanded = [v if f is None else f for v, f in zip(value, found, strict=True)]
        else:
            continue  # not a related field of this record: ignored
        if out is record:
            out = dict(record)
        out[name] = expanded
    return out


def _related(
    account: Account, attribute: str, record_id: str, tree: Tree, *, summary: bool
) -> dict | None:
    """The record an identifier names, itself expanded by `tree`; None when there is none.

    `summary`: the identifier is an element of an array, where a country takes the shorter
    shape spec 2.8 gives for an expanded `countries`.
    """
    if attribute == "countries":
        country = COUNTRY_BY_ID.get(record_id)
        if country is None:
            return None
        return country_summary(country) if summary else country_record(country)
    position = account.locate(attribute, record_id)
    if position is None:
        return None
    record = account.records(attribute)[position]
    if attribute == "campaigns" and "optimizationConfig" in tree:  # spec 2.2, nested
        record = {**record, "optimizationConfig": account.optimization_config(position)}
    return expand_record(account, record, tree)
