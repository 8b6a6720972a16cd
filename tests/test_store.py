"""The store's Table: keys (optionally case-folded) and sorted indexes kept in step with the rows."""

from hypothesis import given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.core.store import Shared, Table


class Row:
    def __init__(self, name: str, status: str) -> None:
        self.name, self.status = name, status


def table() -> Table[Row]:
    return Table({"name": lambda row: row.name, "status": lambda row: row.status}, fold_case=True)


def test_keys_fold_case_and_scans_resume_after_a_position():
    rows = table()
    for name, status in (("b", "x"), ("A", "y"), ("c", "x")):
        rows.put(name, Row(name, status))
    assert rows.get("a").name == "A" and "B" in rows
    positions = [position for position, _ in rows.scan("name")]
    assert [row.name for _, row in rows.scan("name", after=positions[0])] == ["b", "c"]
    assert [row.name for _, row in rows.scan("name", descending=True, after=positions[2])] == ["b", "A"]
    rows.delete("B")
    assert [row.name for _, row in rows.scan("name", after=positions[0])] == ["c"]  # resumes past it


OPS = st.lists(
    st.tuples(st.sampled_from(["put", "delete", "change"]), st.sampled_from("abcdE"), st.sampled_from("xyz")),
    max_size=30,
)


@settings(max_examples=50, deadline=None)
@given(ops=OPS, descending=st.booleans())
def test_indexes_follow_puts_deletes_and_reindexes(ops, descending):
    rows, model, order = table(), {}, []
    for op, name, status in ops:
        key = name.lower()
        if op == "put" and key not in model:
            model[key] = Row(name, status)
            order.append(key)
            rows.put(name, model[key])
        elif op == "delete" and key in model:
            del model[key]
            order.remove(key)
            rows.delete(name)
        elif op == "change" and key in model:
            model[key].status = status
            rows.reindex(name)
    expected = sorted(order, key=lambda key: (model[key].status, order.index(key)), reverse=descending)
    assert [row.name.lower() for _, row in rows.scan("status", descending)] == expected
    assert len(rows) == len(model)


def test_shared_copies_hold_equal_strings_and_integers_once_and_nothing_mutable_in_common():
    shared = Shared(limit=4)
    role = "arn:aws:iam::123456789012:role/" + "r" * 8  # built at run time: not interned by Python
    first = shared.copy({"RoleArn": role, "Resources": {"Count": 12345, "Groups": [role, True, 1.5]}})
    again = shared.copy({"RoleArn": "".join(role), "Resources": {"Count": int("12345"), "Groups": [role]}})
    assert again["RoleArn"] is first["RoleArn"] and again["Resources"]["Count"] is first["Resources"]["Count"]
    assert first == {"RoleArn": role, "Resources": {"Count": 12345, "Groups": [role, True, 1.5]}}
    assert first["Resources"] is not again["Resources"]
    assert first["Resources"]["Groups"] is not again["Resources"]["Groups"]
    again["Resources"]["Count"] = 1  # a record changes its own copy only
    assert first["Resources"]["Count"] == 12345
    for number in range(10):  # past the limit the pool starts again: still equal values
        assert shared.copy(f"value-{number}") == f"value-{number}"
    assert len(shared._strings) <= 4
