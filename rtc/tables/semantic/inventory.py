"""Rules for checking a table against ``--inventory`` captures (RTC647, RTC648). They are
declared with the table rules but reported by :mod:`rtc.api.validating`, which holds the
inventory comparison."""

from __future__ import annotations

from rtc.rules import rule

INVENTORY_SERVER = rule("RTC647", "inventory-missing-server", "warning",
                        "--inventory has no captures for a server of the table.", """
    What: the inventory folder has no subfolder named after this server_id (for a table
    with one server, the folder itself may hold the captures). An error when the folder
    matches no server at all.
    Why: the server's values cannot be checked against the facts.
    Example: `--inventory inv/` with inv/atlas-01/ but a table naming atlas-02 too.
    Fix: capture the server into INVENTORY/<server_id>/ (hccn_tool, npu-smi outputs).""", also={"error": "the folder matches no server of the table at all"})
INVENTORY_DEVICE = rule("RTC648", "inventory-unknown-device", "warning",
                        "The table uses a device the server's captures do not show.", """
    What: a device_id of the table has no facts in the server's inventory, while the
    inventory knows other devices of the server.
    Why: the device may not exist (a /dev/davinciN that is not there), or the captures
    are incomplete; either way its values could not be checked.
    Example: device 8 on a server whose captures cover devices 0..7.
    Fix: check the device id, or capture that device too.""")

#: The rules this module declares (collected by rtc.tables.semantic.RULES).
RULES = (INVENTORY_SERVER, INVENTORY_DEVICE)
