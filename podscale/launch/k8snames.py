"""Kubernetes names and values a generated job takes from the user, checked before it is
printed (one line, exit 2), by the rules the API server and the JobSet controller apply:
names and namespaces are RFC 1123 labels (a Service's name an RFC 1035 one: a letter
first), a pod's hostname — the name with the suffixes the Job or JobSet adds — at most 63
characters, an image a non-empty word, a GKE cluster's name at most 40 characters."""

from __future__ import annotations

import re

from podscale.core.errors import UsageError

#: RFC 1035 (a letter first) and RFC 1123 (a letter or digit first) labels
DNS_1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
DNS_1123 = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
LABEL_MAX = 63
GKE_CLUSTER_MAX = 40


def label(value: str, flag: str, *, letter_first: bool = True, most: int = LABEL_MAX) -> str:
    """``value`` where it is a DNS label of at most ``most`` characters, else UsageError."""
    rule = DNS_1035 if letter_first else DNS_1123
    if not value or len(value) > most or not rule.fullmatch(value):
        first = "a lowercase letter" if letter_first else "a lowercase letter or digit"
        raise UsageError(f"bad {flag} {value!r}: want at most {most} lowercase letters, "
                         f"digits and '-', starting with {first} and ending with a letter or "
                         "digit (RFC 1123)")
    return value


def claim(value: str | None) -> None:
    """A PersistentVolumeClaim's name (an RFC 1123 subdomain: labels joined by dots, at
    most 253 characters), where one is given."""
    if value is None:
        return
    if len(value) > 253 or not all(DNS_1123.fullmatch(p) for p in value.split(".")):
        raise UsageError(f"bad --results-pvc {value!r}: want a claim's name: lowercase "
                         "letters, digits, '-' and '.', at most 253 (RFC 1123)")


def hostname(longest: str, flag: str, value: str, how: str) -> None:
    """A pod's hostname (``longest``: the longest the job makes) within 63 characters."""
    if len(longest) > LABEL_MAX:
        raise UsageError(f"{flag} {value!r} is too long: the pods' hostnames ({how}, e.g. "
                         f"{longest}) would have {len(longest)} characters, over "
                         f"Kubernetes' {LABEL_MAX}; {LABEL_MAX - len(longest) + len(value)} "
                         "at most here")


def image(value: str) -> str:
    if not value.strip() or any(c.isspace() for c in value):
        raise UsageError(f"bad --image {value!r}: want a container image reference, e.g. "
                         "us-docker.pkg.dev/PROJECT/REPO/podscale:TAG")
    return value


def check_indexed_job(name: str, namespace: str, image_ref: str, hosts: int,
                      results_pvc: str | None = None) -> None:
    """An Indexed Job and its headless Service (``podscale k8s``)."""
    claim(results_pvc)
    label(name, "--name")
    label(namespace, "--namespace", letter_first=False)
    image(image_ref)
    hostname(f"{name}-{max(hosts - 1, 0)}", "--name", name, "NAME-INDEX")


def check_jobset(name: str, namespace: str, image_ref: str, slices: int, hosts: int,
                 job: str, results_pvc: str | None = None) -> None:
    """A JobSet of ``slices`` Indexed Jobs named ``job`` (``podscale jobset``, and the one
    ``xpk`` writes)."""
    claim(results_pvc)
    label(name, "--name")
    label(namespace, "--namespace", letter_first=False)
    image(image_ref)
    hostname(f"{name}-{job}-{max(slices - 1, 0)}-{max(hosts - 1, 0)}", "--name", name,
             f"NAME-{job}-SLICE-INDEX")


def cluster(value: str) -> str:
    """A GKE cluster's name (``podscale xpk --cluster``)."""
    return label(value, "--cluster", most=GKE_CLUSTER_MAX)
