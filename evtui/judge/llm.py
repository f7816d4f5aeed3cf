"""The `llm` judge: the rubric answered by any litellm model (hosted, Ollama, or an OpenAI-compatible server).

Calls are async (litellm.acompletion) on one background event loop, at most `concurrency` at a time. Every
attempt has its own timeout; 429, 5xx, timeouts and connection errors are retried by us (the openai client's
own retries are off) with exponential backoff; a reply that is not valid rubric JSON gets one repair prompt,
then the item is a failed Judgment with the reason. A sweep never raises for one bad item.

API keys: litellm reads the provider's variable (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...) itself;
EVTUI_JUDGE_API_KEY (or api_key=) overrides it. A loopback api_base gets a placeholder key unless one is
given explicitly, so a user's hosted key is never sent to a local server. Keys are never stored, and every
error text is scrubbed of them before it reaches a Judgment.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import datetime
import email.utils
import ipaddress
import logging
import math
import os
import queue
import random
import re
import socket
import threading
import time
import warnings
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from evtui.errors import EvtuiError
from evtui.judge.base import Judgment
from evtui.judge.rubric import (
    OUTPUT_SCHEMA,
    PROMPT_VERSION,
    Context,
    RubricError,
    build_messages,
    context_from,
    parse_output,
    repair_messages,
)
from evtui.models import Evidence, ParsedQuery, Sentence

if TYPE_CHECKING:
    from evtui.library import Library

Messages = list[dict[str, str]]
LOCAL_PLACEHOLDER_KEY = "sk-local"  # OpenAI-compatible clients refuse an empty key; local servers ignore it
MAX_TOKENS = 256  # a rubric verdict is ~60 tokens; the cap also bounds the cost of a runaway reply
TYPICAL_OUT_TOKENS = 80
MAX_BACKOFF = 30.0  # also the most a Retry-After header makes us wait
# Calls in a row (across items) that may time out before the sweep stops calling the server.
TIMEOUTS_IN_A_ROW = 3
CONNECT_BACKOFF = 1.0  # the most we wait before asking again a server that refused the connection
SERVER_SILENT = "server not answering"  # how a silent server's reason begins (LLMClient.silent says the rest)

# The reason of the items a cancelled sweep never judged (status 'skipped': not cached, judged next time).
CANCELLED = "not judged: the judging was cancelled"
STOP_WAIT = 5.0  # the most a stopping sweep waits for its calls in flight to be cancelled

_LITELLM: Any = None
_LITELLM_LOCK = threading.Lock()


def litellm_module() -> Any:
    """Import litellm once, offline and quiet (its import otherwise fetches a price map and logs debug hints)."""
    global _LITELLM
    with _LITELLM_LOCK:
        if _LITELLM is None:
            os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
            os.environ.setdefault("LITELLM_LOG", "ERROR")
            try:
                import litellm
            except ImportError as exc:  # pragma: no cover - litellm is a core dependency
                raise EvtuiError("the llm judge needs litellm: pip install 'litellm==1.106.2'") from exc
            litellm.suppress_debug_info = True
            litellm.set_verbose = False
            litellm.turn_off_message_logging = True
            litellm.drop_params = True
            # litellm makes a provider's request coroutine in a thread: a call cancelled meanwhile (the user stopped
            # the judge) leaves it unawaited, which is the point (no request sent), not a bug to warn about.
            warnings.filterwarnings("ignore", message=r"coroutine '\w+\.acompletion' was never awaited",
                                    category=RuntimeWarning)
            for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm"):
                logging.getLogger(name).setLevel(logging.CRITICAL)
            _LITELLM = litellm
    return _LITELLM


# -- secrets ---------------------------------------------------------------------------------------
_KEYLIKE = re.compile(r"\b(sk|pk|rk|key|xai|gsk|hf)[-_][A-Za-z0-9_\-]{6,}")


def _secrets(extra: Sequence[str | None] = ()) -> list[str]:
    found = [s for s in extra if s and len(s) >= 6]
    for name, value in os.environ.items():
        upper = name.upper()
        if value and len(value) >= 8 and (upper.endswith(("_KEY", "_TOKEN", "_SECRET")) or "API_KEY" in upper):
            found.append(value)
    return sorted(set(found), key=len, reverse=True)


def redact(text: str, extra: Sequence[str | None] = ()) -> str:
    """The text with every known key (and anything shaped like one) replaced by ***."""
    for s in _secrets(extra):
        text = text.replace(s, "***")
    return _KEYLIKE.sub(lambda m: m.group(1) + "-***", text)


def is_loopback(api_base: str | None) -> bool:
    """Does `api_base` name this machine? Then it gets a placeholder key, never the provider's real one.
    Every spelling counts: 127.0.0.0/8 (also short forms such as 127.1), ::1, 0.0.0.0 and :: (which connect to
    this machine), IPv4-mapped IPv6 ([::ffff:127.0.0.1]) and localhost names."""
    if not api_base:
        return False
    try:
        host = (urlparse(api_base).hostname or "").lower().rstrip(".")
    except ValueError:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])  # an IPv6 zone (%eth0) names no other host
    except ValueError:
        try:  # the short and numeric IPv4 forms the resolver accepts too (127.1, 2130706433)
            ip = ipaddress.IPv4Address(socket.inet_aton(host)) if host and ":" not in host else None
        except OSError:
            ip = None
    if ip is None:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback or ip.is_unspecified


# -- the event loop all calls run on ---------------------------------------------------------------
_LOOP: asyncio.AbstractEventLoop | None = None
_LOOP_LOCK = threading.Lock()


def run_async(coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
    """Run a coroutine on evtui's one background loop (litellm caches clients per loop, so a fresh
    asyncio.run per sweep would strand them), callable from any thread, also from inside a running loop."""
    global _LOOP
    with _LOOP_LOCK:
        if _LOOP is None or _LOOP.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="evtui-llm", daemon=True).start()
            _LOOP = loop
    return asyncio.run_coroutine_threadsafe(coro, _LOOP)


# -- one completion, with retries ------------------------------------------------------------------
@dataclass
class Completion:
    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    notes: list[str] = field(default_factory=list)


class CallError(Exception):
    """A call that failed for good. `fatal`: every later call would fail the same way (bad key, no server)."""

    def __init__(self, reason: str, *, fatal: bool = False, tokens_in: int = 0, tokens_out: int = 0,
                 cost: float = 0.0, skip: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.fatal = fatal
        self.skip = skip  # the server stopped answering: the items not judged are "skipped", not "failed"
        self.tokens_in, self.tokens_out, self.cost = tokens_in, tokens_out, cost


def retry_after(exc: BaseException) -> float | None:
    """The seconds a Retry-After header asks for (a number or an HTTP date). litellm hands its exceptions a
    response with empty headers and keeps the server's own in `litellm_response_headers`."""
    for headers in (getattr(exc, "litellm_response_headers", None),
                    getattr(getattr(exc, "response", None), "headers", None)):
        value = headers.get("retry-after") if headers is not None and hasattr(headers, "get") else None
        if not value:
            continue
        try:
            return max(0.0, float(value))
        except ValueError:
            pass
        try:
            when = email.utils.parsedate_to_datetime(str(value))
        except (TypeError, ValueError):
            continue
        if when.tzinfo is None:
            when = when.replace(tzinfo=datetime.timezone.utc)
        return max(0.0, (when - datetime.datetime.now(datetime.timezone.utc)).total_seconds())
    return None


def connection_problem(exc: BaseException) -> str | None:
    """'connection refused', 'host not found' or 'connection error' when `exc` (or what caused it) says the server
    could not be reached at all; None for anything else. litellm reports a refused connection as a 500
    InternalServerError "Connection error." with the OS error further down its chain."""
    generic = False
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cur, socket.gaierror):
            return "host not found"
        if type(cur).__name__ == "APIConnectionError" or "connection error" in str(cur).lower():
            generic = True
        cur = cur.__cause__ or cur.__context__
    return "connection error" if generic else None


# What providers say when no key was found (litellm passes them on as a 500 "InternalServerError"): no retry can
# help, so the user hears at once which variable to set instead of after the backoff ladder.
_NO_KEY = re.compile(r"missing credentials|api_key client option must be set|no api key|missing \w+ api key|"
                     r"api key (?:is )?(?:not set|missing|required)", re.I)


def missing_key(exc: BaseException, model: str) -> str | None:
    """'no API key for MODEL: set VAR …' when `exc` says the provider found no credentials; None otherwise."""
    if not _NO_KEY.search(str(exc)):
        return None
    try:
        wanted = [k for k in litellm_module().validate_environment(model).get("missing_keys", []) if "KEY" in k]
    except Exception:  # an unmapped provider: name no variable rather than a wrong one
        wanted = []
    where = (f"set {' or '.join(wanted)}" if wanted else "set the provider's API key variable") + \
        " (or EVTUI_JUDGE_API_KEY), or give --api-base for a local server"
    return f"no API key for {model}: {where}"


def estimate_tokens(messages: Sequence[dict[str, str]]) -> int:
    """~4 characters a token in English prose, plus a few tokens of chat framing per message."""
    return sum(math.ceil(len(m.get("content", "")) / 4) + 4 for m in messages)


class LLMClient:
    """litellm chat completions with our retry policy, usage and cost. Shared by the judge and the bench."""

    def __init__(self, model: str, api_base: str | None = None, api_key: str | None = None, *,
                 timeout: float = 60.0, max_retries: int = 3, backoff: float = 1.0, temperature: float = 0.0,
                 json_schema: bool | None = None) -> None:
        if not model or not model.strip():
            raise EvtuiError("no judge model: pass --model (a litellm model string such as openai/gpt-4o-mini, "
                             "anthropic/claude-3-5-haiku-latest, ollama/llama3.1) or set judge_model in the config")
        model = model.strip()
        if api_base and (urlparse(api_base).username or urlparse(api_base).password):
            # The HTTP client refuses them beside a key, and a URL is echoed in logs: keys go in the environment.
            raise EvtuiError("the judge's api_base must not carry credentials (user:password@); put the key in the "
                             "provider's environment variable or EVTUI_JUDGE_API_KEY")
        if api_base and "/" not in model:
            model = f"openai/{model}"  # a bare name on an OpenAI-compatible server
        self.model = model
        self.api_base = api_base or None
        explicit = api_key or os.environ.get("EVTUI_JUDGE_API_KEY") or None
        self._api_key = explicit or (LOCAL_PLACEHOLDER_KEY if is_loopback(api_base) else None)
        self.timeout = float(timeout)
        self.max_retries = max(0, int(max_retries))
        self.backoff = float(backoff)
        self.temperature = temperature
        # llama.cpp's server follows a JSON schema given inside json_object; hosted APIs may reject the extra key.
        self.json_schema = is_loopback(api_base) if json_schema is None else json_schema
        self._json_mode = True
        self._price: tuple[float, float] | None = None
        self._priced = False  # looked up yet?
        self.timeouts_in_a_row = 0  # calls that timed out since the server last answered
        # A server that cannot be reached (refused, no such host) is retried by one call; the calls beside it wait
        # for that one's outcome instead of retrying too, and once it gives up `unreachable` says why and every
        # call of this sweep fails at once with that reason (LLMJudge.judge clears it for the next sweep).
        self.unreachable: str | None = None
        self._prober: object | None = None
        self._probe: asyncio.Future[None] | None = None

    def __repr__(self) -> str:  # never show the key
        return f"LLMClient(model={self.model!r}, api_base={self.api_base!r})"

    # pricing
    def price(self) -> tuple[float, float] | None:
        """(USD per input token, per output token), or None when litellm does not know the model."""
        if not self._priced:
            self._priced = True
            litellm = litellm_module()
            try:
                info = litellm.get_model_info(self.model)
                pin, pout = info.get("input_cost_per_token"), info.get("output_cost_per_token")
                self._price = (float(pin), float(pout)) if pin is not None and pout is not None else None
            except Exception:  # litellm raises a plain Exception for unmapped models
                self._price = None
        return self._price

    def price_note(self) -> str:
        return f"no price known for {self.model}: its calls are counted as costing $0"

    def call_cost(self, tokens_in: int, tokens_out: int) -> float:
        p = self.price()
        return tokens_in * p[0] + tokens_out * p[1] if p else 0.0

    # calls
    def _params(self, messages: Messages, max_tokens: int, json_mode: bool) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model, "messages": messages, "temperature": self.temperature, "max_tokens": max_tokens,
            "timeout": self.timeout, "max_retries": 0,  # retries are ours, with our backoff
        }
        if self.api_base:
            params["api_base"] = self.api_base
        if self._api_key:
            params["api_key"] = self._api_key
        if json_mode and self._json_mode:
            rf: dict[str, Any] = {"type": "json_object"}
            if self.json_schema:
                rf["schema"] = OUTPUT_SCHEMA
            params["response_format"] = rf
        return params

    def _reason(self, exc: BaseException) -> str:
        name = type(exc).__name__
        msg = str(exc) or name
        for prefix in (f"litellm.{name}: ", f"{name}: "):  # litellm repeats the class name twice
            msg = msg.removeprefix(prefix)
        return redact(f"{name}: {msg}"[:500], [self._api_key])

    def silent(self) -> str:
        """Why the calls left were not made: a server that let TIMEOUTS_IN_A_ROW calls time out, named with the
        wait it got and the setting that lengthens it."""
        return (f"{SERVER_SILENT}: {TIMEOUTS_IN_A_ROW} calls in a row to {self.where()} got no reply within "
                f"{self.timeout:g} s (judge_timeout sets how long to wait)")

    def where(self) -> str:
        """The server, for a message: the api_base, or the provider a hosted model string names."""
        return self.api_base or f"the {self.model.split('/', 1)[0]} API"

    async def acomplete(self, messages: Messages, *, max_tokens: int = MAX_TOKENS, json_mode: bool = False) -> Completion:
        me = object()
        try:
            return await self._acomplete(messages, max_tokens, json_mode, me)
        finally:
            if self._prober is me:  # this call was retrying an unreachable server for all: the others go on
                if self._probe is not None and not self._probe.done():
                    self._probe.set_result(None)
                self._prober = self._probe = None

    async def _acomplete(self, messages: Messages, max_tokens: int, json_mode: bool, me: object) -> Completion:
        litellm = litellm_module()
        retryable = (litellm.RateLimitError, litellm.InternalServerError, litellm.ServiceUnavailableError,
                     litellm.BadGatewayError, litellm.Timeout, litellm.APIConnectionError, asyncio.TimeoutError)
        fatal = (litellm.AuthenticationError, litellm.PermissionDeniedError, litellm.NotFoundError)
        attempt = 0
        while True:
            if self.timeouts_in_a_row >= TIMEOUTS_IN_A_ROW:
                raise CallError(self.silent(), fatal=True, skip=True)
            if self.unreachable:
                raise CallError(self.unreachable, fatal=True)
            try:
                resp = await asyncio.wait_for(
                    litellm.acompletion(**self._params(messages, max_tokens, json_mode)),
                    timeout=self.timeout + 5.0)  # litellm honours `timeout`; this is the backstop
            except fatal as exc:
                raise CallError(missing_key(exc, self.model) or self._reason(exc), fatal=True) from None
            except litellm.BadRequestError as exc:
                if json_mode and self._json_mode and "response_format" in str(exc).lower():
                    self._json_mode = False  # this server has no JSON mode: ask in plain text from now on
                    continue
                raise CallError(self._reason(exc)) from None
            except retryable as exc:
                if (no_key := missing_key(exc, self.model)) is not None:
                    self.unreachable = no_key  # the same for every call of this sweep: fail them all at once
                    raise CallError(no_key, fatal=True) from None
                if isinstance(exc, (litellm.Timeout, asyncio.TimeoutError)):
                    # A silent server costs a whole timeout per attempt (4 x 60 s an item): after a few in a
                    # row, across items, stop calling it.
                    self.timeouts_in_a_row += 1
                    if self.timeouts_in_a_row >= TIMEOUTS_IN_A_ROW:
                        raise CallError(self.silent(), fatal=True, skip=True) from None
                else:
                    self.timeouts_in_a_row = 0
                    problem = connection_problem(exc)
                    if problem is not None:
                        if self._prober is not None and self._prober is not me and self._probe is not None:
                            # Another call is retrying this server: its outcome is ours, without more attempts.
                            await asyncio.shield(self._probe)
                            continue  # it gave up (the loop's top says so) or the server answered: try again
                        if self._prober is None:
                            self._prober, self._probe = me, asyncio.get_running_loop().create_future()
                        if attempt >= self.max_retries:
                            self.unreachable = (f"could not reach {self.where()} ({problem}, "
                                                f"gave up after {attempt + 1} attempt(s))")
                            raise CallError(self.unreachable, fatal=True) from None
                        # A refusal comes at once: retry it soon (a starting server is up within seconds), not
                        # on the exponential ladder that spaces out a busy server's 429s and 5xx.
                        await asyncio.sleep(min(self._delay(attempt, exc), CONNECT_BACKOFF))
                        attempt += 1
                        continue
                if attempt >= self.max_retries:
                    # litellm reports a refused connection as a 500 "Connection error": no server, so stop asking.
                    unreachable = (isinstance(exc, litellm.APIConnectionError)
                                   or "connection error" in str(exc).lower())
                    raise CallError(f"gave up after {attempt + 1} attempt(s): {self._reason(exc)}",
                                    fatal=unreachable) from None
                await asyncio.sleep(self._delay(attempt, exc))
                attempt += 1
                continue
            except litellm.APIError as exc:
                status = getattr(exc, "status_code", None)
                if isinstance(status, int) and status >= 500 and attempt < self.max_retries:
                    await asyncio.sleep(self._delay(attempt, exc))
                    attempt += 1
                    continue
                raise CallError(self._reason(exc)) from None
            except Exception as exc:  # anything else litellm raises: fail this item, keep the sweep
                raise CallError(self._reason(exc)) from None
            self.timeouts_in_a_row = 0
            return self._completion(resp)

    def _delay(self, attempt: int, exc: BaseException) -> float:
        delay = self.backoff * (2 ** attempt) * (0.75 + 0.5 * random.random())
        wait = retry_after(exc)
        if wait is not None:
            delay = max(delay, wait)
        return min(delay, MAX_BACKOFF)

    def _completion(self, resp: Any) -> Completion:
        litellm = litellm_module()
        try:
            text = resp.choices[0].message.content or ""
        except (AttributeError, IndexError, TypeError):
            text = ""
        usage = getattr(resp, "usage", None)
        tin = int(getattr(usage, "prompt_tokens", 0) or 0)
        tout = int(getattr(usage, "completion_tokens", 0) or 0)
        notes: list[str] = []
        try:
            cost = float(litellm.completion_cost(completion_response=resp) or 0.0)
        except Exception:
            cost = self.call_cost(tin, tout)
            if self.price() is None:
                notes.append(self.price_note())
        return Completion(text=text, tokens_in=tin, tokens_out=tout, cost=cost, notes=notes)

    def complete(self, messages: Messages, *, max_tokens: int = MAX_TOKENS, json_mode: bool = False) -> Completion:
        """The blocking form, for callers outside any event loop (the bench strategies). Each call asks the server
        again, even after an earlier one found it unreachable."""
        self.unreachable = None
        return run_async(self.acomplete(messages, max_tokens=max_tokens, json_mode=json_mode)).result()


# -- the judge -------------------------------------------------------------------------------------
@dataclass
class _Budget:
    """The sweep's cost limit. A call reserves its worst case before it starts and settles at its real cost. A call
    that does not fit beside the calls in flight waits for them to settle (they usually cost far less than their
    worst case) and is refused only when it does not fit with none in flight; calls are let through in the order
    they asked, so the best-ranked sentences are judged first."""

    limit: float | None
    spent: float = 0.0
    reserved: float = 0.0
    stopped: str | None = None
    _turn: asyncio.Lock | None = None  # one caller at a time decides (FIFO): a later call never overtakes a waiter
    _settled: asyncio.Event | None = None  # set when a call in flight settles

    async def take(self, amount: float) -> bool:
        if self.limit is None:
            self.reserved += amount
            return True
        if self._turn is None:
            self._turn = asyncio.Lock()
        async with self._turn:
            while True:
                if self.stopped:
                    return False
                if self.spent + self.reserved + amount <= self.limit + 1e-12:
                    self.reserved += amount
                    return True
                if self.reserved <= 1e-12:  # nothing in flight: this call alone would pass the limit
                    self.stopped = (f"not judged: the next call (up to ~${amount:.4f}) would take the cost past the "
                                    f"limit of ${self.limit:.4f} (spent ${self.spent:.4f})")
                    return False
                if self._settled is None:
                    self._settled = asyncio.Event()
                await self._settled.wait()

    def settle(self, reserved: float, actual: float) -> None:
        self.reserved = max(0.0, self.reserved - reserved)
        self.spent += actual
        if self._settled is not None:
            self._settled.set()
            self._settled = None


class LLMJudge:
    """Judge (query, sentence) pairs with an LLM on the evtui rubric. One Judgment per Evidence, in order."""

    name = "llm"
    prompt_version = PROMPT_VERSION

    def __init__(self, model: str, api_base: str | None = None, api_key: str | None = None, concurrency: int = 4,
                 timeout: float = 60, max_retries: int = 3, *, backoff: float = 1.0, max_tokens: int = MAX_TOKENS,
                 library: Library | None = None, context_window: int = 1, json_schema: bool | None = None) -> None:
        self.client = LLMClient(model, api_base, api_key, timeout=timeout, max_retries=max_retries, backoff=backoff,
                                json_schema=json_schema)
        self.model = self.client.model
        self.concurrency = max(1, int(concurrency))
        self.max_tokens = max_tokens
        self.library = library
        self.context_window = context_window

    def __repr__(self) -> str:
        return f"LLMJudge(model={self.model!r}, api_base={self.client.api_base!r})"

    def messages(self, query: ParsedQuery, evidence: Sequence[Evidence]) -> list[Messages]:
        """The prompts, with each sentence's neighbours read from the library."""
        contexts = self._contexts([e.sentence.id for e in evidence])
        return [build_messages(query, e, contexts.get(e.sentence.id)) for e in evidence]

    def _contexts(self, ids: list[str]) -> dict[str, Context]:
        """Neighbours of every sentence in one query, on a cursor of its own (the TUI judges in a worker
        thread while its main thread searches on the library's connection)."""
        if self.library is None or self.context_window <= 0 or not ids:
            return {}
        w = self.context_window
        with self.library.store.con.cursor() as cur:
            rows = cur.execute(
                "SELECT t.id, s.id, s.paper_id, s.position, s.section_title, s.section_kind, s.is_heading, s.text"
                " FROM sentences t JOIN sentences s ON s.paper_id = t.paper_id"
                " AND s.position BETWEEN t.position - ? AND t.position + ?"
                " WHERE t.id IN (SELECT unnest(?)) ORDER BY t.id, s.position", [w, w, ids]).fetchall()
        windows: dict[str, list[Sentence]] = {}
        for target, *sentence in rows:
            windows.setdefault(target, []).append(Sentence(*sentence))
        return {sid: context_from(window, sid) for sid, window in windows.items()}

    def call_estimate(self, messages: Messages, *, worst: bool = False) -> tuple[int, int, float]:
        """(tokens in, tokens out, USD) of one judgment; `worst` bounds it (full output cap, +25% input)."""
        tin = estimate_tokens(messages)
        tout = self.max_tokens if worst else TYPICAL_OUT_TOKENS
        if worst:
            tin = math.ceil(tin * 1.25)
        return tin, tout, self.client.call_cost(tin, tout)

    def judge(self, query: ParsedQuery, evidence: list[Evidence], *,
              on_result: Callable[[Judgment], None] | None = None, max_cost: float | None = None,
              cancelled: Callable[[], bool] | None = None) -> list[Judgment]:
        """Judge every item; `on_result` runs in the caller's thread as each verdict arrives; with `max_cost`
        no call starts whose worst-case cost would take the sweep past it (those items come back 'skipped').

        Stopping: an exception in the caller's thread (Ctrl-C's KeyboardInterrupt, also one raised by
        `on_result`) or `cancelled()` turning true (polled every 0.1 s: the app's worker.is_cancelled) cancels the
        calls in flight (their HTTP requests are dropped) and starts no new one; the verdicts that had already
        come back still reach `on_result` (they are paid for: the caller stores them) before the exception goes
        on, or, when cancelled, before the items never judged come back 'skipped' (CANCELLED says why)."""
        if not evidence:
            return []
        litellm_module()  # its ~3 s import happens here, not inside the first call's timing
        self.client.unreachable = None  # a new sweep asks again: the server may be up by now
        prompts = self.messages(query, evidence)
        aspect_ids = [a.id for a in query.aspects]
        inbox: queue.Queue[tuple[int, Judgment]] = queue.Queue()
        stop = threading.Event()
        running: list[asyncio.Task[Any]] = []

        async def sweep() -> None:
            task = asyncio.current_task()
            if task is not None:
                running.append(task)
            if not stop.is_set():  # stopped before it began: not one call
                await self._sweep(evidence, prompts, aspect_ids, inbox.put, _Budget(max_cost), stop)

        future = run_async(sweep())
        results: list[Judgment | None] = [None] * len(evidence)
        done = 0
        stopped = False
        try:
            while done < len(evidence):
                if cancelled is not None and cancelled():
                    stopped = True
                    break
                try:
                    i, j = inbox.get(timeout=0.1)
                except queue.Empty:
                    if future.done():
                        future.result()  # re-raises a bug in the sweep itself
                        break
                    continue
                results[i] = j
                done += 1
                if on_result is not None:
                    on_result(j)
            if not stopped:
                future.result()
        except BaseException:
            self._halt(future, stop, running)
            self._deliver(inbox, results, on_result)
            raise
        if stopped:
            self._halt(future, stop, running)
            self._deliver(inbox, results, on_result)
            return [j if j is not None else self._skipped(e.sentence.id, CANCELLED)
                    for j, e in zip(results, evidence, strict=True)]
        return [j if j is not None else self._failed(e.sentence.id, "no verdict was produced")
                for j, e in zip(results, evidence, strict=True)]

    @staticmethod
    def _halt(future: concurrent.futures.Future[Any], stop: threading.Event, running: list[asyncio.Task[Any]]) -> None:
        """Stop a sweep and wait (up to STOP_WAIT) until it has: no call is started after `stop` is set, and the
        sweep's task is cancelled on its loop, which cancels every call in flight (httpx drops its request)."""
        stop.set()
        if running:  # else the sweep has not begun and returns at once when it does (it reads `stop` first)
            task = running[0]
            task.get_loop().call_soon_threadsafe(task.cancel)
        concurrent.futures.wait([future], timeout=STOP_WAIT)

    @staticmethod
    def _deliver(inbox: queue.Queue[tuple[int, Judgment]], results: list[Judgment | None],
                 on_result: Callable[[Judgment], None] | None) -> None:
        """Hand on the verdicts that came back before the sweep stopped (paid for: the caller stores them). The
        one an interrupt caught inside `on_result` is not handed on again: the caller has counted it (evtui judge)
        and, storing first, has mostly stored it. A failing `on_result` ends this (the first error is the one
        raised); a second Ctrl-C goes on at once."""
        pending: list[tuple[int, Judgment]] = []
        while True:
            try:
                pending.append(inbox.get_nowait())
            except queue.Empty:
                break
        for i, j in pending:
            results[i] = j
            if on_result is not None:
                try:
                    on_result(j)
                except Exception:  # noqa: BLE001 - e.g. the disk is full: the first error is the one raised
                    return

    async def _sweep(self, evidence: Sequence[Evidence], prompts: Sequence[Messages], aspect_ids: list[str],
                     emit: Callable[[tuple[int, Judgment]], None], budget: _Budget,
                     stop: threading.Event | None = None) -> None:
        sem = asyncio.Semaphore(self.concurrency)
        fatal: list[CallError] = []

        async def one(i: int) -> None:
            sid = evidence[i].sentence.id
            async with sem:
                if fatal:
                    j = (self._skipped(sid, fatal[0].reason) if fatal[0].skip
                         else self._failed(sid, f"not attempted: {fatal[0].reason}"))
                else:
                    try:
                        j = await self._judge_one(sid, prompts[i], aspect_ids, budget, stop)
                    except CallError as exc:
                        if exc.fatal and not fatal:
                            fatal.append(exc)
                        j = self._failed(sid, exc.reason, tokens_in=exc.tokens_in, tokens_out=exc.tokens_out,
                                         cost=exc.cost, status="skipped" if exc.skip else "failed")
                    except Exception as exc:  # a bug must not end the sweep either; keep the reason
                        j = self._failed(sid, redact(f"{type(exc).__name__}: {exc}"))
            emit((i, j))

        await asyncio.gather(*(one(i) for i in range(len(evidence))))

    async def _judge_one(self, sid: str, messages: Messages, aspect_ids: list[str], budget: _Budget,
                         stop: threading.Event | None = None) -> Judgment:
        t0 = time.perf_counter()
        tin = tout = 0
        cost = 0.0
        notes: list[str] = []

        async def call(msgs: Messages) -> Completion | None:
            nonlocal tin, tout, cost
            worst = self.call_estimate(msgs, worst=True)[2]
            if not await budget.take(worst):
                return None
            try:
                if stop is not None and stop.is_set():  # stopped while this one waited for its turn: no call
                    raise asyncio.CancelledError
                c = await self.client.acomplete(msgs, max_tokens=self.max_tokens, json_mode=True)
            except BaseException:  # a failed or cancelled call costs nothing and must not hold its reservation
                budget.settle(worst, 0.0)
                raise
            budget.settle(worst, c.cost)
            tin, tout, cost = tin + c.tokens_in, tout + c.tokens_out, cost + c.cost
            notes.extend(n for n in c.notes if n not in notes)
            return c

        first = await call(messages)
        if first is None:
            return self._skipped(sid, budget.stopped or "not judged")
        try:
            out = parse_output(first.text, aspect_ids)
        except RubricError as err:
            try:
                second = await call(repair_messages(messages, first.text, str(err), aspect_ids))
            except CallError as exc:
                raise CallError(f"malformed output ({err}); the repair call failed: {exc.reason}", fatal=exc.fatal,
                                tokens_in=tin, tokens_out=tout, cost=cost) from None
            if second is None:
                return self._failed(sid, f"malformed output ({err}); no repair: {budget.stopped}", tokens_in=tin,
                                    tokens_out=tout, cost=cost, notes=notes)
            try:
                out = parse_output(second.text, aspect_ids)
            except RubricError as err2:
                return self._failed(sid, f"malformed output after one repair attempt: {err2}", tokens_in=tin,
                                    tokens_out=tout, cost=cost, notes=notes)
            notes.append("valid after one repair prompt")
        notes.append(f"{time.perf_counter() - t0:.2f}s")
        return Judgment(
            sentence_id=sid, score=20 * out.level, level=out.level, confidence=out.confidence, stance=out.stance,
            aspects=out.aspects, rationale=out.rationale, judge=self.name, model=self.model,
            prompt_version=self.prompt_version, cost=cost, tokens_in=tin, tokens_out=tout, notes=notes,
        )

    def _failed(self, sid: str, reason: str, *, status: str = "failed", tokens_in: int = 0, tokens_out: int = 0,
                cost: float = 0.0, notes: list[str] | None = None) -> Judgment:
        return Judgment(
            sentence_id=sid, score=0, level=0, confidence=0, stance="neutral", aspects=[], rationale="",
            judge=self.name, model=self.model, prompt_version=self.prompt_version, cost=cost, tokens_in=tokens_in,
            tokens_out=tokens_out, status=status, error=redact(reason, [self.client._api_key]), notes=notes or [],
        )

    def _skipped(self, sid: str, reason: str) -> Judgment:
        return self._failed(sid, reason, status="skipped")
