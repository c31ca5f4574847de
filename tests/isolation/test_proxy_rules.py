"""The proxy's OS rule as data (harness/isolation/proxy_rules.py), without a firewall: which
vendor addresses it allows, the rules in their order per family and chain, the kernel-log lines
it reads back into proxy_egress.jsonl entries, and the packets the log lost."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.isolation import proxy_dns, proxy_rules
from harness.isolation.proxy_rules import LocalProxyRules, ProxyRules, Target
from rundir.network.proxy_egress import read_proxy_egress

RUN = "study-20261205T000000Z-abcdef"


def test_record_mode_allows_nothing_and_live_resolves_every_vendor() -> None:
    assert proxy_rules.vendor_targets(["openai=http://10.1.2.3:8443"], live=False) == ([], [])
    targets, unresolved = proxy_rules.vendor_targets(
        ["openai=http://10.1.2.3:8443", "anthropic=https://127.0.0.1"], live=True
    )
    assert Target("10.1.2.3", "10.1.2.3", 8443) in targets
    assert Target("127.0.0.1", "127.0.0.1", 443) in targets
    # No network here: the real vendors' names resolve to nothing, so nothing of theirs is let
    # through (and run.json says which did not resolve).
    assert {"api.cohere.com", "api.voyageai.com"} <= set(unresolved)


def test_host_names_are_pinned_for_the_proxy_addresses_are_not() -> None:
    flags = proxy_rules.add_host_flags(
        [Target("api.x.com", "1.2.3.4", 443), Target("api.x.com", "1.2.3.5", 443),
         Target("api.x.com", "1.2.3.4", 443), Target("10.0.0.1", "10.0.0.1", 80)]
    )  # fmt: skip
    assert flags == ["--add-host", "api.x.com:1.2.3.4", "--add-host", "api.x.com:1.2.3.5"]


def test_the_docker_rules_let_only_vendors_through_then_log_and_refuse_the_rest() -> None:
    https, other = proxy_rules.prefixes(RUN)
    rules = ProxyRules("br-abc", (Target("h", "10.0.0.9", 8443),), (), RUN, "harness.run=x")
    specs = rules.specs("iptables")
    for chain, let_through in (("INPUT", "ACCEPT"), ("DOCKER-USER", "RETURN")):
        mine = [" ".join(rule) for c, rule in specs if c == chain]
        assert all(
            rule.startswith("-i br-abc -m conntrack ! --ctstate ESTABLISHED,RELATED")
            for rule in mine
        )
        # No DNS at all: the vendor names are pinned in the proxy's container.
        assert not any("--dport 53" in rule for rule in mine)
        assert [r.rsplit(" ", 1)[-1] for r in mine[:1]] == [let_through]
        assert "-d 10.0.0.9 -p tcp --dport 8443" in mine[0]
        assert "--dport 443" in mine[1] and mine[1].endswith(f"--log-prefix {https}")
        assert mine[2].endswith("REJECT")
        assert mine[3].endswith(f"--log-prefix {other}")
        assert mine[4].endswith("REJECT")
    record = ProxyRules("br-abc", (), (), RUN, "c").specs("iptables")
    assert not any("ACCEPT" in rule or "RETURN" in rule for _, rule in record)
    six = [rule for _, rule in rules.specs("ip6tables")]
    assert all("conntrack" not in rule for rule in six) and len(six) == 4


def test_the_local_rule_allows_the_stream_server_port_on_loopback_and_no_other() -> None:
    rules = LocalProxyRules("harness-x-proxy-1", (), (), RUN, "c", (40123,))
    specs = [" ".join(rule) for _, rule in rules.specs("iptables")]
    allowed = [rule for rule in specs if rule.endswith("ACCEPT")]
    assert len(allowed) == 1
    assert "-o lo -d 127.0.0.1 -p tcp --dport 40123" in allowed[0]
    assert allowed[0].startswith("-m cgroup --path harness-x-proxy-1 -m conntrack !")
    six = [" ".join(rule) for _, rule in rules.specs("ip6tables")]
    assert not any(rule.endswith("ACCEPT") for rule in six)  # it listens on IPv4 only


def test_a_postgres_ledger_url_names_the_tcp_addresses_the_proxy_books_at() -> None:
    assert proxy_rules.ledger_targets("postgresql://u@10.0.0.5:6543/db") == (
        [Target("10.0.0.5", "10.0.0.5", 6543)],
        [],
    )
    assert proxy_rules.ledger_targets("postgresql://10.0.0.5,10.0.0.6:7000/db")[0] == [
        Target("10.0.0.5", "10.0.0.5", 5432),
        Target("10.0.0.6", "10.0.0.6", 7000),
    ]
    query = "postgresql:///db?host=10.0.0.7&port=6000"
    assert proxy_rules.ledger_targets(query)[0] == [Target("10.0.0.7", "10.0.0.7", 6000)]
    # A socket directory, or no host (libpq's default socket), is no TCP: nothing to allow.
    assert proxy_rules.ledger_targets("postgresql:///db?host=/var/run/postgresql") == ([], [])
    assert proxy_rules.ledger_targets("postgresql://u@/db") == ([], [])


def test_kernel_lines_become_entries_by_kind_and_other_runs_are_ignored(tmp_path: Path) -> None:
    https, other = proxy_rules.prefixes(RUN)
    log = tmp_path / "kernel.log"
    log.write_text(
        "# follower started\n"
        f"2026-12-05T12:00:00.1+00:00 {other}IN=br-abc OUT= SRC=192.168.48.2 DST=172.17.0.1 "
        "PROTO=TCP SPT=40000 DPT=37409\n"
        f"2026-12-05T12:00:00.2+00:00 {https}IN=br-abc OUT= SRC=192.168.48.2 DST=172.17.0.1 "
        "PROTO=TCP SPT=40001 DPT=443\n"
        "2026-12-05T12:00:00.3+00:00 harness 000000 :proxy IN=br-x SRC=1.1.1.1 DST=2.2.2.2 "
        "PROTO=UDP DPT=9\n"
    )
    refused = proxy_rules.collect(tmp_path, RUN, log)
    entries = read_proxy_egress(tmp_path / "proxy_egress.jsonl")
    assert [(e.destination, e.kind) for e in entries] == [
        ("172.17.0.1:37409", "refused"),
        ("172.17.0.1:443", "https_unresolved"),
    ]
    assert refused == {"172.17.0.1:37409 (refused)": 1, "172.17.0.1:443 (https_unresolved)": 1}


def test_packets_the_kernel_log_lost_are_counted() -> None:
    https, other = proxy_rules.prefixes(RUN)
    counts = {https: 2, other: 3, "harness 123456 arm ": 50}
    assert proxy_rules.uncounted(RUN, 4, counts) == 1
    assert proxy_rules.uncounted(RUN, 5, counts) == 0


def _accepted(rules: ProxyRules) -> list[str]:
    return [
        f"{chain} {' '.join(spec)}"
        for chain, spec in rules.specs("iptables")
        if spec[-1] in ("ACCEPT", "RETURN")
    ]


def test_the_docker_rule_allows_a_live_runs_postgres_ledger_and_no_more() -> None:
    url = "postgresql://u@10.0.0.5:6543/db"
    rules, said = proxy_rules.docker_rules(
        "br-x", ["openai=http://10.0.0.9:8080"], live=True, run_id=RUN, comment="c", ledger_url=url
    )
    allowed = _accepted(rules)
    ledger = [rule for rule in allowed if "-d 10.0.0.5 -p tcp --dport 6543" in rule]
    assert [rule.split()[0] for rule in ledger] == ["INPUT", "DOCKER-USER"]
    assert all("-i br-x" in rule for rule in ledger)
    assert not any("10.0.0.5" in rule and "6543" not in rule for rule in allowed)  # that port only
    assert "ledger 10.0.0.5=10.0.0.5:6543" in said
    assert "10.0.0.9=10.0.0.9:8080" in said
    # Record mode has no upstream and books nothing: the ledger is not allowed either.
    record, said = proxy_rules.docker_rules(
        "br-x", [], live=False, run_id=RUN, comment="c", ledger_url=url
    )
    assert _accepted(record) == [] and said == "enforced: the proxy may open TCP to nothing"


def test_a_ledger_host_name_is_pinned_for_the_proxy() -> None:
    flags = proxy_rules.add_host_flags([Target("pg.internal", "10.0.0.5", 5432)])
    assert flags == ["--add-host", "pg.internal:10.0.0.5"]


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("postgresql://u@127.0.0.1:5432/db", "its host 127.0.0.1 is the host's loopback"),
        ("postgresql://u@localhost/db", "its host localhost (127.0.0.1) is the host's loopback"),
        ("postgresql://u@10.0.0.5,127.0.0.2/db", "its host 127.0.0.2 is the host's loopback"),
        ("postgresql:///db?host=/var/run/postgresql", "names no TCP host"),
        ("postgresql://u@/db", "names no TCP host"),
        ("postgresql://u@no-such-host.invalid/db", "no-such-host.invalid does not resolve"),
    ],
)
def test_a_ledger_the_proxys_container_cannot_reach_is_refused(url: str, why: str) -> None:
    with pytest.raises(proxy_rules.LedgerUnreachableError, match=re.escape(why)):
        proxy_rules.docker_rules("br-x", [], live=True, run_id=RUN, comment="c", ledger_url=url)


def test_a_local_proxy_may_send_only_dns_queries_and_only_to_the_resolvers() -> None:
    # Port 53 of any other address is a server like any other; a datagram to a resolver that
    # is no DNS query is refused whatever the conntrack state (a reply makes the flow
    # ESTABLISHED), and DNS over TCP is not allowed at all.
    _, other = proxy_rules.prefixes(RUN)
    rules = LocalProxyRules("harness-x-proxy-1", (), ("10.255.255.53",), RUN, "c")
    specs = [" ".join(rule) for _, rule in rules.specs("iptables")]
    shape = [rule for rule in specs if "--u32" in rule]
    assert len(shape) == 2 and specs[:2] == shape
    assert "conntrack" not in shape[0] and "-p udp --dport 53 -m u32 ! --u32" in shape[0]
    assert shape[0].endswith(f"--log-prefix {other}") and shape[1].endswith("REJECT")
    allowed = [rule for rule in specs if rule.endswith("ACCEPT")]
    assert allowed == [
        "-m cgroup --path harness-x-proxy-1 -m conntrack ! --ctstate ESTABLISHED,RELATED "
        "-d 10.255.255.53 -p udp --dport 53 -m comment --comment c -j ACCEPT"
    ]


def test_the_resolvers_are_the_ipv4_nameservers_of_resolv_conf(tmp_path: Path) -> None:
    conf = tmp_path / "resolv.conf"
    conf.write_text(
        "# generated\nsearch example.org\nnameserver 10.0.0.2\nnameserver fe80::1\n"
        "nameserver 10.0.0.3 # second\nnameserver 10.0.0.2\nnameserver bogus\n"
    )
    assert proxy_dns.resolvers(conf) == ("10.0.0.2", "10.0.0.3")
    assert proxy_dns.resolvers(tmp_path / "missing") == ()
    addresses = proxy_dns.non_resolvers(("10.0.0.2",))
    assert all(next(addresses).startswith("127.53.") for _ in range(100))
