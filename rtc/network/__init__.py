"""The network model: device subnets and routed fabrics, host networks, the per-host port
plan, and device facts from inventory captures.

Modules:

* :mod:`~rtc.network.values` -- value parsers of the ``network`` / ``fabric`` blocks and
  of the port attributes (used by :mod:`rtc.syntax.schema`);
* :mod:`~rtc.network.lowering` -- run at the end of lowering: networks, fabrics, visible
  devices, inventory, job launch settings, port plan;
* :mod:`~rtc.network.addressing` -- subnet arithmetic (integer triples, linear in devices);
* :mod:`~rtc.network.reachability` -- which cross-server device pairs reach each other;
* :mod:`~rtc.network.ports` -- every port each host binds, with its owner;
* :mod:`~rtc.network.env` -- the launch environment variables the model reads.

Nothing here opens a socket or sends a packet: reachability and ports are modelled from
the description and the captures.
"""
