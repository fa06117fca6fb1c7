"""Backup and port rules of version 1.2 tables: backup_device_ip is the partner die's
address (RTC641), backup_device_port is not the partner's device_port (RTC642), and host
ports are unique within a server (RTC643, any 1.x table)."""

from __future__ import annotations

from rtc.diagnostics import Related, error
from rtc.rules import rule

from ..jsonload import format_path
from ..json_values import address, decimal
from ._context import Ctx

BACKUP_IP = rule("RTC641", "backup-device-ip", "error",
                 "backup_device_ip is not the device IP of the other die of the same chip.", """
    What: on A3 each chip has two dies, devices 2k and 2k+1; a device's backup_device_ip
    must be the device_ip of its partner die, which must be in the table too.
    Why: HCCL fails over to the SIO-linked partner die only; another address (or the
    device's own) is rejected when the table is parsed with op retry enabled.
    Example: device 0 with backup_device_ip equal to device 2's address.
    Fix: set backup_device_ip of device 2k to the device_ip of 2k+1 and vice versa.""")
BACKUP_PORT = rule("RTC642", "backup-device-port", "error",
                   "backup_device_port equals the device_port of the backup die.", """
    What: the backup port of a device is the port its partner die already listens on
    (device_port, 16666 when absent).
    Why: HCCL rejects it; both would bind the same port on the partner die.
    Example: "backup_device_port": "16666" while the partner has no device_port.
    Fix: pick a port the partner does not use, e.g. 16667.""")
HOST_PORT = rule("RTC643", "duplicate-host-port", "error",
                 "Two devices of one server have the same host_port.", """
    What: host_port repeats within a server.
    Why: host_port is the host NIC port used for op retry; two ranks of one server cannot
    bind the same port, and HCCL requires them to differ.
    Example: "host_port": "16665" on devices 0 and 1 of node_0.
    Fix: give each device of a server its own host_port.""")


def backups_of(ctx: Ctx, label: str, by_id: dict) -> None:
    for did, (d, dp) in sorted(by_id.items()):
        bp = dp + ("backup_device_ip",)
        backup = d.get("backup_device_ip")
        if not isinstance(backup, str) or not backup or bp in ctx.bad:
            continue
        b_ip, state = address(backup)
        if state != "ok":
            continue  # RTC634
        own, _ = address(d.get("device_ip"))
        partner = did ^ 1
        subject = f"server {label}, device {did}"
        if own is not None and b_ip == own:
            ctx.add(error(BACKUP_IP, f"{format_path(bp)}: backup_device_ip {backup} is the device's "
                          f"own device_ip", ctx.span(bp), subject=subject,
                          hint=f"use the device_ip of device {partner}, the other die of this chip"))
            continue
        other = by_id.get(partner)
        if other is None:
            ctx.add(error(BACKUP_IP, f"{format_path(bp)}: device {did} backs up to device {partner} "
                          f"(the other die of its chip), which is not in the table for {label}",
                          ctx.span(bp), subject=subject,
                          hint="both dies of a chip must be in the table when backups are used"))
            continue
        pd, ppath = other
        p_ip, _ = address(pd.get("device_ip"))
        if p_ip != b_ip:
            ctx.add(error(BACKUP_IP, f"{format_path(bp)}: backup_device_ip {backup} is not the "
                          f"device_ip of device {partner} ({pd.get('device_ip') or 'none'}), the "
                          "other die of this chip", ctx.span(bp), subject=subject,
                          related=[Related(ctx.span(ppath), f"device {partner}")],
                          hint=f"set it to device {partner}'s device_ip"))
        bport_path = dp + ("backup_device_port",)
        bport = None if bport_path in ctx.bad else decimal(d.get("backup_device_port"))
        if bport is not None:
            pport = decimal(pd.get("device_port")) if "device_port" in pd else 16666
            if pport == bport:
                ctx.add(error(BACKUP_PORT, f"{format_path(bport_path)}: backup_device_port {bport} "
                              f"is the device_port of device {partner}, the backup die"
                              + ("" if "device_port" in pd else " (16666 by default)"),
                              ctx.span(bport_path), subject=subject,
                              hint="choose a port the partner die does not listen on"))


def host_port_of(ctx: Ctx, d: dict, hp: tuple, label: str, ports: dict[int, tuple]) -> None:
    """RTC643 for the host_port of device ``d`` (at path ``hp``) on server ``label``;
    ``ports`` maps the ports the server's earlier devices use to their paths."""
    port = None if hp in ctx.bad else decimal(d.get("host_port"))
    if port is None:
        return
    first = ports.get(port)
    if first is not None:
        ctx.add(error(HOST_PORT, f"{format_path(hp)}: host_port {port} of {label} "
                      "is already used by another device of the server",
                      ctx.span(hp), related=[Related(ctx.span(first), "first used here")],
                      subject=f"server {label}, device {d.get('device_id')}",
                      hint="each device of a server needs its own host_port"))
    else:
        ports[port] = hp


#: The rules this module reports (collected by rtc.tables.semantic.RULES).
RULES = (BACKUP_IP, BACKUP_PORT, HOST_PORT)
