"""The delivery transports as the daemon and ``doctor`` see them: one declaration each.

See docs/architecture.md, "Transports". ``base.py`` holds the :class:`Transport`
protocol and its defaults, ``registry.py`` the one registry; ``hook.py``,
``channel.py`` and ``follow.py`` declare the bundled ones. The host-facing runners
(``hook deliver``, ``channel serve``, ``events follow``) live in ``transports/``.
"""
