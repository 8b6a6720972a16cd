"""Policies as written on the command line, their combinations and sweeps; bad ones named."""

from __future__ import annotations

import pytest

from sagemaker_plans_local.simulation.policies import PlanSpec, Policy, PolicyError, parse_policy, sweep

P5 = "ml.p5.48xlarge"


def test_each_policy_and_a_combination():
    assert parse_policy("on-demand") == Policy(on_demand=True)
    assert parse_policy("as-is") == Policy()
    assert parse_policy("keep-alive=600") == Policy(keep_alive=600)
    combined = parse_policy(f"plan={P5}:2:48+keep-alive=600+overflow")
    assert combined == Policy(600, (PlanSpec(P5, 2, 48),), overflow=True)
    assert combined.label == f"plan={P5}:2:48+keep-alive=600+overflow"
    assert parse_policy(f"overflow+keep-alive=600+plan={P5}:2:48").label == combined.label
    assert combined.plan_for(P5) == PlanSpec(P5, 2, 48) and combined.plan_for("ml.g5.xlarge") is None
    assert Policy(on_demand=True).keep_alive_for(900) is None and Policy().keep_alive_for(900) == 900


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "an empty term"),
        ("keep-alive=7200", "keep-alive takes whole seconds from 0 to 3600, not '7200'"),
        ("keep-alive=600+keep-alive=60", "keep-alive given twice"),
        (f"plan={P5}:3:48", "a plan has 1, 2, 4, 8, 16, 32, 64 instances, not 3"),
        ("plan=ml.g4dn.xlarge:1:24", "training plans are not sold for 'ml.g4dn.xlarge'"),
        (f"plan={P5}:2", "a plan is plan=TYPE:COUNT:HOURS"),
        (f"plan={P5}:2:0", "a plan lasts 1 to 4368 hours, not 0"),
        (f"plan={P5}:2:24+plan={P5}:4:24", "one plan per instance type"),
        ("overflow", "overflow needs a plan"),
        ("on-demand+keep-alive=60", "unknown term 'on-demand'"),
        ("spot", "unknown term 'spot'"),
    ],
)
def test_a_bad_policy_is_named(text, message):
    with pytest.raises(PolicyError, match=message.replace("+", r"\+").replace("(", r"\(")):
        parse_policy(text)


def test_sweeps():
    keep_alive = sweep("keep-alive=0..3600", [Policy()])
    assert [policy.keep_alive for policy in keep_alive] == list(range(0, 3601, 300))
    base = parse_policy(f"plan={P5}:2:48+overflow")
    assert [p.label for p in sweep("plan-count=1..8", [base])] == [
        f"plan={P5}:{n}:48+overflow" for n in (1, 2, 4, 8)
    ]
    assert [p.plans[0].hours for p in sweep("plan-hours=24..96", [base])] == [24, 48, 72, 96]
    assert [p.keep_alive for p in sweep("keep-alive=0..1000/500", [Policy(on_demand=True)])] == [0, 500, 1000]
    for text, message in [
        ("plan-count=1..8", "needs exactly one"),
        ("keep-alive=10..0", "must not run backwards"),
        ("plan-count=1..8/2", "no STEP"),
        ("spot=1..2", "PARAMETER=FROM..TO"),
        ("keep-alive=0..7200/3600", "keep-alive takes whole seconds"),
    ]:
        with pytest.raises(PolicyError, match=message):
            sweep(text, [Policy()])
