"""The page's state is its address: moving between views keeps the settings and filters, settings read
from it say what they ignored, and each sidebar widget is set from it."""
from __future__ import annotations

from collections.abc import Callable, Iterable

import streamlit as st

from search.engine import Engine
from search.filters import FILTERS, address_key
from search.render import plain_markdown


KEEP = ("k", "mode", "list")  # what survives moving between views, with every filter's keys (filters.address_key)


def kept(key: str) -> bool:
    """Whether an address key survives a move to another view (a setting or a filter)."""
    return key in KEEP or address_key(key)


def go(**params: str) -> None:
    """Move to a new URL state (a browser history entry), keeping the settings and filters."""
    kept_now = {key: st.query_params.get_all(key) for key in st.query_params.keys()
                if kept(key) and st.query_params.get_all(key)}
    st.query_params.from_dict({**kept_now, **params})


def url_setting(name: str, default: object, parse: Callable[[str], object], allowed: str,
                ignored: list[str]) -> object:
    """A setting from the URL; a value that does not parse is named in `ignored` and the default used."""
    raw = st.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        return parse(raw)
    except ValueError:
        ignored.append(f"{name}={raw[:40]} (use {allowed})")
        return default


def one_of(choices: Iterable[object]) -> Callable[[str], object]:
    """A parser for url_setting: the choice whose text the raw value is."""
    def parse(raw: str):
        for c in choices:
            if str(c) == raw.strip():
                return c
        raise ValueError(raw)
    return parse


def reading_list(engine: Engine) -> list[str]:
    """The ids in ?list=, valid ones only; unknown ones are named once above the page."""
    raw = st.query_params.get("list", "")
    known, unknown = engine.catalog.listed(raw)
    if unknown:
        st.warning("Not in this index, left out of the reading list: "
                   + plain_markdown(", ".join(unknown[:10]) + (" …" if len(unknown) > 10 else "")))
    return known


def set_list(ids: list[str]) -> None:
    """The reading list into the address (?list=), or out of it when empty."""
    if ids:
        st.query_params["list"] = ",".join(ids)
    elif "list" in st.query_params:
        del st.query_params["list"]


def toggle_list(pid: str, ids: list[str]) -> None:
    """Add the paper to the reading list, or take it off."""
    set_list([i for i in ids if i != pid] if pid in ids else [*ids, pid])


def set_param(key: str, widget_key: str, default: object = None) -> None:
    """A widget's callback: its value into the address under `key`; none, or its default (the page's, or what a
    filter writes nothing for: sort=relevance), and the key leaves it."""
    value = st.session_state[widget_key]
    if value is True:
        text: str | list = "1"
    elif isinstance(value, list):
        text = value
    else:
        text = "" if value is None or value is False else f"{value:g}" if isinstance(value, float) else str(value)
    f = next((f for f in FILTERS if f.key == key), None)
    values = text if isinstance(text, list) else [text]
    if not any(values) or text == str(default) or (f is not None and not f.write(f.read({key: values})[0])):
        st.query_params.pop(key, None)   # an unticked box, a cleared box or a default: nothing in the address
    else:
        st.query_params[key] = text


def url_int(name: str, default: int) -> int:
    """A whole number from the address; the default where it is missing or not a number."""
    try:
        return int(st.query_params.get(name, default))
    except ValueError:
        return default


def synced(key: str, value: object) -> None:
    """A widget keeps its own state across reruns, but the address is the truth: a button that moves to
    another address ("Search every submission") or the browser's Back left the sidebar saying what the list
    was no longer. Each widget's state is set from the address before it is drawn (and drawn with no
    default of its own, which Streamlit would otherwise warn about)."""
    if key not in st.session_state or st.session_state[key] != value:
        st.session_state[key] = value
