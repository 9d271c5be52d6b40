"""OpenReview's API v2 through the official client, as the real service behaves.

The client (openreview-py) sends every request through a requests Session whose adapter has no
timeout, retries 429 and 5xx itself, sleeps whatever Retry-After says (an hour, silently), and whose
retry logger turns a 429 with a JSON body into a JSONDecodeError with no status in it. It also logs
in with OPENREVIEW_USERNAME/OPENREVIEW_PASSWORD to whatever host it is given. So `Api` builds the
client anonymously and mounts its own adapter: a timeout on every request, no retries of its own,
and the last answer kept, so that `Api.call` can tell a rate limit from a failing server from an
answer that is not JSON, announce each wait on stderr, and end in one line in the user's words.
(urllib3's Retry would honour Retry-After too, but silently, without a bound on one wait, and only
for the answers it can see: not for a cut body or an answer that is not JSON, which `call` retries.)

`call` waits what the server asks (Retry-After, or the resetTime of OpenReview's 429 body), backs off
exponentially only where the server names no time, and gives up on a request when its failed tries
and waits would pass a budget of time (`Policy.budget`), not after a count: a rate limit that clears
every second is waited out, a server that stays down ends the fetch in minutes.

`login` sends the password only to OpenReview's own API over https, unless the caller trusts the host
(`trust_host`): an --api address pointed at a mirror, a proxy or a typo must not receive it.
"""
from __future__ import annotations

import contextlib
import email.utils
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from itertools import count
from urllib.parse import urlsplit

DEFAULT_API = "https://api2.openreview.net"
API_ENV = "OPENREVIEW_API_BASEURL_V2"      # the official client's own variable for its address
CREDENTIALS = ("OPENREVIEW_USERNAME", "OPENREVIEW_PASSWORD", "OPENREVIEW_TOKEN")
OPENREVIEW_HOSTS = frozenset({"api2.openreview.net", "api.openreview.net", "openreview.net"})


class FetchError(Exception):
    """The download cannot go on; the message is one line naming the cause. `not_found`: OpenReview
    itself said that what was asked for does not exist."""

    def __init__(self, message: str, not_found: bool = False):
        super().__init__(message)
        self.not_found = not_found


@dataclass(frozen=True)
class Policy:
    """How long to wait for OpenReview, and how long to keep trying one request."""
    # a backstop for a server that asks for almost no wait again and again: the budget is what ends a
    # rate limit or an outage
    tries: int = 1000
    first_wait: float = 2.0      # the first wait where the server names none; doubled for each such wait after
    max_wait: float = 120.0      # a longer wait asked for by the server ends the fetch with the time to retry
    connect_timeout: float = 10.0
    read_timeout: float = 60.0   # between two packets of an answer, not for the whole answer
    # seconds one request may spend on failed tries and the waits between them; an answer that comes
    # starts the next request's budget afresh, so a long download is not ended by scattered rate limits
    budget: float = 300.0


def default_api() -> str:
    return os.environ.get(API_ENV) or DEFAULT_API


def is_openreview(url: str) -> bool:
    """Whether `url` is OpenReview's own API over https: the one place a password goes unasked."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:   # a port that is not a number
        return False
    return parts.scheme == "https" and (parts.hostname or "") in OPENREVIEW_HOSTS and port in (None, 443)


def _adapter_class():
    from requests.adapters import HTTPAdapter

    class RecordingAdapter(HTTPAdapter):
        """Timeouts on every request, no retries (Api.call retries), the last answer kept."""

        def __init__(self, timeout: tuple[float, float]):
            super().__init__(max_retries=0, pool_maxsize=4)
            self.timeout = timeout
            self.last = None

        def send(self, request, **kwargs):
            if kwargs.get("timeout") is None:
                kwargs["timeout"] = self.timeout
            self.last = None
            self.last = response = super().send(request, **kwargs)
            return response

    return RecordingAdapter


@contextlib.contextmanager
def _without_credentials() -> Iterator[None]:
    # the client reads these from the environment in its constructor and logs in with them
    saved = {k: os.environ.pop(k) for k in CREDENTIALS if k in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def _seconds_until(value) -> float | None:
    """A Retry-After header (seconds or an HTTP date) or a resetTime (ISO date) as seconds from now."""
    if value is None:
        return None
    text = str(value).strip()
    try:
        return max(float(text), 0.0)
    except ValueError:
        pass
    when = None
    with contextlib.suppress(TypeError, ValueError):
        when = email.utils.parsedate_to_datetime(text)
    if when is None:
        with contextlib.suppress(ValueError):
            when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max((when - datetime.now(timezone.utc)).total_seconds(), 0.0)


def _clock_time(seconds_from_now: float) -> str:
    return datetime.fromtimestamp(time.time() + seconds_from_now, timezone.utc).strftime("%H:%M UTC")


def _wait_words(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} minutes"


@dataclass
class Problem:
    """What went wrong with one try, in the user's words."""
    text: str                    # "OpenReview is failing (HTTP 503)"
    retry: bool
    wait_hint: float | None = None   # seconds the server asked us to wait
    not_found: bool = False


class Api:
    """The official client, anonymous unless `login`, with `call` to run its methods as the service
    behaves. `say` gets the lines announcing each wait; `sleep` does the waiting (tests pass fakes).
    `login` to a host other than OpenReview's own over https is refused unless `trust_host`."""

    def __init__(self, url: str, policy: Policy = Policy(), login: bool = False,
                 say: Callable[[str], None] | None = None, sleep: Callable[[float], None] = time.sleep,
                 trust_host: bool = False):
        url = url.rstrip("/")
        # refused before the client exists: nothing, not even an anonymous request, goes to the host
        if login and not trust_host and not is_openreview(url):
            raise FetchError(f"--login would send your OpenReview password to {url}, which is not OpenReview's "
                             f"own API ({DEFAULT_API}); add --trust-host if you mean to log in there")
        import openreview

        self.url, self.policy, self.sleep = url, policy, sleep
        self.reached = False   # whether any answer came back yet: the network was there
        self.say = say or (lambda line: print(line, file=sys.stderr, flush=True))
        with _without_credentials():
            try:
                self.client = openreview.api.OpenReviewClient(baseurl=self.url)
            except openreview.OpenReviewException as e:   # an API v1 address
                raise FetchError(_message(e.args[0] if e.args else e)) from None
        self.adapter = _adapter_class()((policy.connect_timeout, policy.read_timeout))
        self.client.session.mount("http://", self.adapter)
        self.client.session.mount("https://", self.adapter)
        if login:
            username, password = os.environ.get("OPENREVIEW_USERNAME"), os.environ.get("OPENREVIEW_PASSWORD")
            if not (username and password):
                raise FetchError("--login needs OPENREVIEW_USERNAME and OPENREVIEW_PASSWORD in the environment")
            self.call("the login", self.client.login_user, username, password)

    def call(self, what: str, fn: Callable, *args, **kwargs):
        """fn(*args, **kwargs), tried again while the trouble is passing (rate limits, 5xx, stalls,
        broken answers) and the policy's budget of time lasts; FetchError with one line when it does
        not pass or cannot."""
        policy = self.policy
        spent, backoffs = 0.0, 0   # seconds of failed tries and waits so far; waits of our own choosing
        for attempt in count(1):
            started = time.monotonic()
            try:
                result = fn(*args, **kwargs)
                self.reached = True
                return result
            except FetchError:
                raise
            except Exception as e:  # the client raises OpenReviewException, requests' errors, KeyError, ...
                problem = self.problem(e, what)
            spent += time.monotonic() - started   # a stall until the timeout is time the user waited too
            if not problem.retry:
                raise FetchError(problem.text, problem.not_found)
            if attempt >= policy.tries:
                raise FetchError(f"{problem.text} after {attempt} tries")
            # the server's own time, exactly: sooner is refused again, later only delays. A time of 0
            # (or a resetTime already past, as a skewed clock gives) would make a tight loop: back off
            asked = bool(problem.wait_hint)
            if asked:
                wait = problem.wait_hint
                if wait > policy.max_wait:
                    raise FetchError(f"{problem.text}: OpenReview asks to wait {_wait_words(wait)}; run the "
                                     f"same command again after {_clock_time(wait)}")
            else:
                wait = min(policy.first_wait * 2 ** backoffs, policy.max_wait)
                backoffs += 1
            if spent + wait > policy.budget:
                more = f", and OpenReview asks for {_wait_words(wait)} more" if asked else ""
                raise FetchError(f"{problem.text}: gave up after {_wait_words(spent)} of tries and waits "
                                 f"({attempt} tries{more}), past the retry budget of "
                                 f"{_wait_words(policy.budget)}; try again in a few minutes, or allow "
                                 "longer with --retry-budget SECONDS")
            self.say(f"{problem.text}, waiting {_wait_words(wait)}{' as OpenReview asks' if asked else ''} "
                     f"before try {attempt + 1}")
            self.sleep(wait)
            spent += wait
        raise AssertionError("unreachable")

    def problem(self, e: Exception, what: str) -> Problem:
        """Classify one failed try by the answer's status, its body, or the exception."""
        import openreview
        import requests

        last = self.adapter.last
        if isinstance(e, (openreview.OpenReviewException, ValueError)) and last is not None \
                and last.status_code >= 400:
            error = e.args[0] if isinstance(e, openreview.OpenReviewException) and e.args else {}
            return self._http_problem(last, error, what)
        if isinstance(e, requests.exceptions.Timeout) or "timed out" in str(e).lower():
            return Problem(f"OpenReview did not answer {what} within {self.policy.read_timeout:g} s", True)
        if isinstance(e, requests.exceptions.ChunkedEncodingError):
            return Problem(f"the answer for {what} was cut short", True)
        if isinstance(e, requests.exceptions.ConnectionError):
            # offline from the start is said at once; a network lost mid-download is waited for
            return Problem(f"cannot reach OpenReview at {self.url} ({_reason(e)})", self.reached)
        if isinstance(e, ValueError) and last is not None:   # json's and requests' decode errors
            return Problem(f"the answer for {what} was not JSON ({_looks_like(last)})", True)
        if isinstance(e, (KeyError, TypeError, AttributeError)):
            return Problem(f"the answer for {what} is not what OpenReview's API sends ({type(e).__name__}: {e})",
                           False)
        return Problem(f"{what}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}".rstrip(": "),
                       False)

    def _http_problem(self, response, error, what: str) -> Problem:
        status = response.status_code
        is_json = "json" in response.headers.get("Content-Type", "")
        name = error.get("name", "") if isinstance(error, dict) else ""
        if status == 429 or name == "RateLimitError":
            details = error.get("details") if isinstance(error, dict) else None
            hint = _seconds_until(response.headers.get("Retry-After"))
            if hint is None and isinstance(details, dict):
                hint = _seconds_until(details.get("resetTime"))
            return Problem("rate-limited by OpenReview", True, hint)
        if status >= 500:
            return Problem(f"OpenReview is failing (HTTP {status})", True,
                           _seconds_until(response.headers.get("Retry-After")))
        if not is_json:
            return Problem(f"{self.url} answered {what} with HTTP {status} and {_looks_like(response)}: it does "
                           f"not look like OpenReview's API v2 (check --api or {API_ENV})", False)
        if status in (401, 403):
            return Problem(f"OpenReview refused {what} (HTTP {status}: {_message(error)})", False)
        return Problem(f"OpenReview answered {what} with HTTP {status}: {_message(error)}", False,
                       not_found=status == 404)


def _message(error) -> str:
    if isinstance(error, dict):
        text = f"{error.get('name', 'Error')}: {error.get('message', '')}".strip(": ")
    else:
        text = str(error)
    return text.splitlines()[0][:200] if text else "no message"


def _reason(e: Exception) -> str:
    text = str(e)
    for needle, words in (("Connection refused", "connection refused"),
                          ("Name or service not known", "no such host"),
                          ("Temporary failure in name resolution", "no network, or no such host"),
                          ("Network is unreachable", "network unreachable"),
                          ("RemoteDisconnected", "the server closed the connection"),
                          ("Connection reset", "connection reset"),
                          ("Connection aborted", "connection aborted")):
        if needle in text:
            return words
    return "no connection"


def _looks_like(response) -> str:
    """What an answer that is not the JSON we asked for looks like, for a message."""
    try:
        body = response.content or b""
    except Exception:  # the body itself could not be read
        return "its body could not be read"
    head = body[:512].lstrip().lower()
    if not body:
        return "it was empty"
    if head.startswith((b"<!doctype", b"<html", b"<")) or "html" in response.headers.get("Content-Type", ""):
        return "it looks like an HTML page"
    if head.startswith((b"{", b"[")):
        with contextlib.suppress(ValueError):
            json.loads(body)
            return "it is JSON of another shape"
        return f"it was cut short after {len(body):,} bytes"
    return f"it begins {body[:40]!r}"
