"""Fault injection through the in-process transport, and the sandbox's request record."""

import json

import httpx
import pytest

from sandbox.faults import FaultPlan
from tests.sandbox.conftest import ask, fetch

PARAMS = {"limit": "5"}


def test_a_fault_free_request_answers_json(small):
    response = fetch(small, "/v1/campaigns", PARAMS)
    assert response.status_code == 200
    assert len(response.json()["data"]) == 5


@pytest.mark.parametrize("share", [1.0, 0.0])
def test_429_with_and_without_retry_after(small, share):
    small.faults = FaultPlan(rate_429=1.0, retry_after_share=share, retry_after_seconds=0.25)
    response = fetch(small, "/v1/campaigns", PARAMS)
    assert response.status_code == 429
    assert response.json()["error"]["type"] == "rate_limit_error"
    assert response.headers.get("retry-after") == ("0.25" if share else None)


def test_5xx_is_an_api_error(small):
    small.faults = FaultPlan(rate_5xx=1.0)
    response = fetch(small, "/v1/campaigns", PARAMS)
    assert response.status_code == 503 and response.json()["error"]["type"] == "api_error"


def test_a_truncated_body_is_not_json(small):
    small.faults = FaultPlan(rate_truncate=1.0)
    response = fetch(small, "/v1/campaigns", PARAMS)
    assert response.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        response.json()


def test_a_dropped_connection_raises_remote_protocol_error(small):
    small.faults = FaultPlan(rate_drop=1.0)
    with pytest.raises(httpx.RemoteProtocolError):
        fetch(small, "/v1/campaigns", PARAMS)


def test_a_slow_answer_still_arrives(small):
    small.faults = FaultPlan(rate_slow=1.0, slow_seconds=0.01)
    assert fetch(small, "/v1/campaigns", PARAMS).status_code == 200


def test_health_is_never_faulted(small):
    small.faults = FaultPlan(rate_5xx=1.0)
    assert fetch(small, "/health").status_code == 200


def test_faults_are_a_pure_function_of_the_request_number():
    plan = FaultPlan(rate_429=0.2, rate_5xx=0.2, rate_drop=0.1, rate_truncate=0.1)
    picks = [plan.pick(n) for n in range(1, 401)]
    assert picks == [plan.pick(n) for n in range(1, 401)]
    shares = {name: picks.count(name) / len(picks) for name in ("429", "5xx", "drop")}
    assert 0.12 < shares["429"] < 0.28 and 0.12 < shares["5xx"] < 0.28
    assert 0.04 < shares["drop"] < 0.16
    assert FaultPlan().pick(1) is None


def test_faults_meant_for_one_account_spare_the_others(small):
    small.add_key("agency", kind="agency", accounts=(0, 1))
    troubled, fine = small.accounts[1].id, small.accounts[0].id
    small.faults = FaultPlan(rate_5xx=1.0, accounts=(troubled,))
    assert fetch(small, "/v1/campaigns", PARAMS, "agency", troubled).status_code == 503
    assert fetch(small, "/v1/campaigns", PARAMS, "agency", fine).status_code == 200
    assert fetch(small, "/v1/accounts", PARAMS, "agency").status_code == 200


def test_a_withdrawn_account_is_no_longer_listed_and_answers_403_until_invited_again(small):
    small.add_key("agency", kind="agency", accounts=(0, 1))
    account = small.accounts[1].id
    small.withdraw(account, "agency")
    listed = fetch(small, "/v1/accounts", None, "agency").json()["data"]
    assert [a["id"] for a in listed] == [small.accounts[0].id]
    refused = fetch(small, "/v1/campaigns", PARAMS, "agency", account)
    assert refused.status_code == 403 and account in refused.json()["error"]["message"]
    small.invite(account, "agency")
    assert fetch(small, "/v1/campaigns", PARAMS, "agency", account).status_code == 200


def test_the_request_record_names_method_path_query_account_and_status(small):
    small.add_key("agency", kind="agency", accounts=(0, 1))
    account = small.accounts[1].id
    ask(small, "/v1/targets", limit=3)
    ask(small, "/v1/targets", key="agency", account=account)
    ask(small, "/v1/targets", key="nope")
    first, second, third = small.requests
    assert (first.method, first.path, first.query, first.account, first.status) == (
        "GET",
        "/v1/targets",
        (("limit", "3"),),
        None,
        200,
    )
    assert second.account == account and second.status == 200
    assert third.status == 401


def test_faults_answered_before_the_service_leave_no_record(small):
    small.faults = FaultPlan(rate_429=1.0)
    fetch(small, "/v1/campaigns", PARAMS)
    assert small.requests == []
    small.faults = FaultPlan(rate_truncate=1.0)
    fetch(small, "/v1/campaigns", PARAMS)
    assert [(r.path, r.status) for r in small.requests] == [("/v1/campaigns", 200)]
