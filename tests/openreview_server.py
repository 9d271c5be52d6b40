"""A local HTTP server that speaks the parts of OpenReview's API v2 that `python -m search fetch` uses,
and misbehaves on request the way the real service and the networks before it do.

GET /groups?id=  -> {"groups": [group]} or a 404 NotFoundError, as OpenReview answers (one group, or
                    several: venues with their own names, served side by side)
GET /notes       -> {"notes": [...], "count": N}, filtered by `invitation` or `content.venueid`, ordered
                    by id (`sort=id`), paged by `after` (or `offset`) and `limit` (at most `cap`)
POST /login      -> a token (recorded: an anonymous fetch must never come here)

Faults are queued per path with `plan(path, *faults)`; each request to that path takes the next one:
a `Reply` (any status, body and headers; `rate_limit` and `too_many_requests` build 429s), STALL (no
answer until the client gives up), CUT (half the body, then the connection closes) or HTML (a 200 HTML
page, as a captive portal gives). `plan("/notes", *[too_many_requests(1)] * 3)`: three 429s with
Retry-After: 1, then pages as usual. `nginx=True`
answers everything with nginx's 404 page, as a wrong --api address does. `remove_after={page: id}`
drops a note once that page is served. `log` records every request with its arrival time
(time.monotonic()), so a test can measure the waits between tries. Listens on 127.0.0.1 only.

As a script it serves a file of notes (the shared crawl) for the fetch benchmark, and stops itself
after --lifetime seconds; `--versions earliest` serves each edited review as first posted (a venue before
the discussion), `as_of` and `withdrawn` make a test's "before" and "after".
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse


@dataclass
class Reply:
    status: int
    body: object = None            # dict -> JSON; str or bytes -> sent as is
    headers: dict = field(default_factory=dict)
    content_type: str = "application/json; charset=utf-8"


STALL, CUT, HTML = "stall", "cut", "html"
NGINX_404 = (b"<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1>"
             b"</center>\r\n<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n")
PORTAL = b"<!DOCTYPE html><html><body><h1>Welcome to the hotel Wi-Fi</h1>Please log in.</body></html>"


def rate_limit(reset_in: float = 2.0, retry_after: float | None = None) -> Reply:
    """A 429 as OpenReview sends it: a JSON body naming the error and when the limit resets."""
    reset = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() + reset_in)) + ".000Z"
    body = {"name": "RateLimitError", "status": 429,
            "message": "Too many requests: You have made 37 requests, surpassing the limit of 36 requests.",
            "details": {"limit": 36, "remaining": 0, "resetTime": reset, "used": 37}}
    return Reply(429, body, {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {})


def too_many_requests(retry_after: float = 1) -> Reply:
    """A bare 429 with a Retry-After header and a text body, as a proxy or a CDN in front sends it."""
    return Reply(429, "Too Many Requests", {"Retry-After": f"{retry_after:g}"}, content_type="text/plain")


class Note:
    """One note as served: its JSON line, and what the server filters and orders by."""

    def __init__(self, line: bytes):
        obj = json.loads(line)
        self.line, self.id = line.strip(), obj["id"]
        self.invitations = obj.get("invitations") or []
        self.venueid = ((obj.get("content") or {}).get("venueid") or {}).get("value")


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # a client that gave up (a timeout, a killed fetch) closes mid-answer: expected here
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class OpenReviewServer:
    def __init__(self, notes: list[bytes | dict], group: dict | list[dict], cap: int = 1000,
                 stall_s: float = 30.0, port: int = 0):
        self.notes = sorted((Note(n if isinstance(n, bytes) else json.dumps(n).encode()) for n in notes),
                            key=lambda n: n.id)
        self.groups = {g["id"]: g for g in ([group] if isinstance(group, dict) else group)}
        self.cap, self.stall_s = cap, stall_s
        self.faults: dict[str, list] = {}
        self.nginx = False
        self.remove_after: dict[int, str] = {}
        self.log: list[dict] = []        # every request: method, path, params, authorization, time
        self.pages_served = 0
        self.lock = threading.Lock()
        self.closing = threading.Event()
        self.httpd = _Quiet(("127.0.0.1", port), self._handler())
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread: threading.Thread | None = None

    def plan(self, path: str, *faults) -> "OpenReviewServer":
        self.faults.setdefault(path, []).extend(faults)
        return self

    def start(self) -> "OpenReviewServer":
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # ------------------------------------------------------------ answers

    def notes_page(self, params: dict) -> dict | bytes:
        with self.lock:
            notes = self.notes
            if "invitation" in params:
                notes = [n for n in notes if params["invitation"] in n.invitations]
            if "content.venueid" in params:
                notes = [n for n in notes if n.venueid == params["content.venueid"]]
            count = len(notes)
            if params.get("after"):
                notes = [n for n in notes if n.id > params["after"]]
            offset = int(params.get("offset") or 0)
            limit = min(int(params.get("limit") or 1000), self.cap)
            page = notes[offset:offset + limit]
            self.pages_served += 1
            gone = self.remove_after.pop(self.pages_served, None)
            if gone:
                self.notes = [n for n in self.notes if n.id != gone]
        body = b'{"notes":[' + b",".join(n.line for n in page) + b"]"
        if params.get("count") == "true":
            body += b',"count":' + str(count).encode()
        return body + b"}"

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet: the tests read server.log instead
                pass

            def _send(self, status: int, body: bytes, content_type: str, headers: dict | None = None,
                      length: int | None = None):
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body) if length is None else length))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)
                self.wfile.flush()

            def _answer(self, method: str):
                url = urlparse(self.path)
                params = {k: v[-1] for k, v in parse_qs(url.query).items()}
                if method == "POST":
                    length = int(self.headers.get("Content-Length") or 0)
                    self.rfile.read(length)
                with server.lock:
                    server.log.append({"method": method, "path": url.path, "params": params,
                                       "authorization": self.headers.get("Authorization"),
                                       "time": time.monotonic()})
                    pending = server.faults.get(url.path) or []
                    fault = pending.pop(0) if pending else None
                if server.nginx:
                    return self._send(404, NGINX_404, "text/html")
                if fault == STALL:
                    server.closing.wait(server.stall_s)
                    self.close_connection = True
                    return
                if fault == HTML:
                    return self._send(200, PORTAL, "text/html; charset=utf-8")
                if isinstance(fault, Reply):
                    body = fault.body
                    data = json.dumps(body).encode() if isinstance(body, dict) else (
                        body.encode() if isinstance(body, str) else body or b"")
                    return self._send(fault.status, data, fault.content_type, fault.headers)
                if url.path == "/groups":
                    group = server.groups.get(params.get("id"))
                    if group is None:
                        return self._send(404, json.dumps({"name": "NotFoundError", "status": 404,
                                                           "message": f"Group Not Found: {params.get('id')}"}
                                                          ).encode(), "application/json; charset=utf-8")
                    return self._send(200, json.dumps({"groups": [group]}).encode(), "application/json")
                if url.path == "/notes":
                    body = server.notes_page(params)
                    if fault == CUT:  # the length announced, half of it sent, the connection closed
                        self.close_connection = True
                        return self._send(200, body[:len(body) // 2], "application/json", length=len(body))
                    return self._send(200, body, "application/json; charset=utf-8")
                if url.path == "/login" and method == "POST":
                    token = "eyJhbGciOiJub25lIn0.eyJ1c2VyIjp7ImlkIjoifkFkYTEifX0."
                    return self._send(200, json.dumps({"token": token, "user": {"id": "~Ada1", "profile": {
                        "id": "~Ada1"}}}).encode(), "application/json")
                return self._send(404, json.dumps({"name": "NotFoundError", "message": "Not Found"}).encode(),
                                  "application/json")

            def do_GET(self):
                self._answer("GET")

            def do_POST(self):
                self._answer("POST")

        return Handler


def as_of(note: dict, which: str) -> dict:
    """The note with one version of each reply: "earliest" (as first posted: the crawl before the discussion's
    edits) or "latest"; the crawl lists an edited reply once per version, by its modification date."""
    replies = (note.get("details") or {}).get("replies")
    if not replies:
        return note
    kept: dict[str, dict] = {}
    for r in sorted(replies, key=lambda r: r.get("tmdate") or r.get("mdate") or 0, reverse=which == "earliest"):
        kept[r.get("id") or str(id(r))] = r
    order = list(dict.fromkeys(r.get("id") or str(id(r)) for r in replies))
    return {**note, "details": {**note["details"], "replies": [kept[i] for i in order]}}


def withdrawn(note: dict, venue_id: str = "ICLR.cc/2026/Conference") -> dict:
    """The note as OpenReview lists it once its authors withdrew it."""
    content = {**note["content"], "venueid": {"value": f"{venue_id}/Withdrawn_Submission"},
               "venue": {"value": "ICLR 2026 Conference Withdrawn Submission"}}
    return {**note, "content": content}


def read_notes(path: Path) -> list[bytes]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        return [line for line in f if line.strip()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Serve OpenReview notes on 127.0.0.1 as API v2 does. Prints its "
                                 "address, serves until its standard input closes (or --lifetime), then "
                                 "prints how many requests it answered.")
    ap.add_argument("--notes", type=Path, required=True, help="JSONL (or .jsonl.gz) of notes with details")
    ap.add_argument("--group", type=Path, required=True, action="append",
                    help="the venue group as JSON (repeatable: several venues served side by side, each note "
                         "under the groups its invitations name)")
    ap.add_argument("--port", type=int, default=0, help="the port to listen on (default: any free one); a fixed "
                    "one lets a page started against it follow a server started again")
    ap.add_argument("--cap", type=int, default=1000, help="largest page served")
    ap.add_argument("--lifetime", type=float, default=1800, help="seconds before the server stops itself")
    ap.add_argument("--versions", choices=("all", "earliest", "latest"), default="all",
                    help="each edited reply once per version, as the crawl lists them (all), or only its first "
                         "version (earliest: the venue before the discussion's edits) or its last")
    args = ap.parse_args(argv)
    notes = read_notes(args.notes)
    if args.versions != "all":
        notes = [json.dumps(as_of(json.loads(n), args.versions)).encode() for n in notes]
    server = OpenReviewServer(notes, [json.loads(g.read_text()) for g in args.group], cap=args.cap, port=args.port)
    server.start()
    print(server.url, flush=True)
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    done.wait(args.lifetime)
    server.stop()
    print(f"requests {len(server.log)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
