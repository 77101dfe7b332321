"""A small thread-safe least-recently-used map, for what the app keeps per server process and
shares between sessions (fit results, reweighting draws and answers, finished figures)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any


class Lru:
    """At most ``size`` items; the least recently looked up or stored goes first."""

    def __init__(self, size: int) -> None:
        self._items: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.size = size

    def known(self, key: Any) -> bool:
        with self._lock:
            return key in self._items

    def lookup(self, key: Any, default: Any = None) -> Any:
        with self._lock:
            if key not in self._items:
                return default
            self._items.move_to_end(key)
            return self._items[key]

    def store(self, key: Any, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
