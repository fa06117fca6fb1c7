"""The network library: device subnets and routed fabrics, host networks, reachability, and
the launch environment variables the model reads. Pure functions below the model: nothing
here imports the Topology's module (functions take it as an argument).

Modules:

* :mod:`~rtc.network.addressing` -- subnet arithmetic (integer triples, linear in devices),
  address keys, and the ``network`` / ``fabric`` declarations (:class:`HostNetwork`,
  :class:`Fabric`);
* :mod:`~rtc.network.reachability` -- which cross-server device pairs reach each other;
* :mod:`~rtc.network.env` -- the launch environment variables the model reads.

The value parsers of the network attributes live in :mod:`rtc.syntax.attribute_values`,
their lowering in :mod:`rtc.model.lower_network`, and the port plan in
:mod:`rtc.plan.ports`. Nothing here opens a socket or sends a packet: reachability is
modelled from the description and the captures.
"""
