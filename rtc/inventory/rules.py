"""The rules of the inventory parsers (RTC480-RTC489; the NVIDIA GPU captures' RTC474 and
RTC575 are declared in nvidia_smi.py and nccl_tests.py): the parsers of this package report
these, ``rtc rules`` lists them and ``rtc explain`` explains them."""

from rtc.rules import rule

UNREADABLE = rule("RTC480", "inventory-unreadable", "error", "An inventory capture or folder cannot be read.", """
    What: a capture file or the inventory folder is missing, unreadable or binary (a warning
    when only some bytes were not UTF-8 and were replaced).
    Why: its facts are lost, so rtc cannot compare the plan with what the NPUs report.
    Example: `inventory "atlas-01/"` pointing at a folder that does not exist.
    Fix: check the path; save command output as plain text.""", also={"warning": "some bytes were not UTF-8 and were replaced, or a folder is empty"})
HCCN_CONF_BAD_LINE = rule("RTC481", "hccn-conf-bad-line", "error", "An /etc/hccn.conf line is not key_<device>=value.", """
    What: no `=`, an empty key, bad characters, or a known key without its device suffix
    (`address=` instead of `address_3=`).
    Why: the driver applies the setting to no device, so the NPU keeps an old address.
    Example: `address=6.0.2.7`.
    Fix: write `address_3=6.0.2.7`.""")
HCCN_CONF_DUPLICATE_KEY = rule("RTC482", "hccn-conf-duplicate-key", "warning", "An /etc/hccn.conf key is set twice.", """
    What: the same `key_N` appears on two lines.
    Why: which value the driver applies is not documented (rtc uses the last one).
    Example: two `address_0=` lines after a copy-paste.
    Fix: delete one of them.""")
BAD_VALUE = rule("RTC483", "inventory-bad-value", "error", "An inventory value has the wrong shape.", """
    What: an IP, netmask, prefix length or flag that does not parse (a warning for unknown
    `link status` / `net health status` words, which are kept as read).
    Why: the fact cannot be used or checked against the plan.
    Example: `ipaddr:6.0.2.300`.
    Fix: correct the device's configuration and capture again.""")
UNKNOWN_LINE = rule("RTC484", "hccn-tool-unknown-line", "warning", "A line in an hccn_tool capture is not known output.", """
    What: text in a capture that no hccn_tool command prints.
    Why: a fact may be missing or attributed to the wrong device.
    Example: a shell prompt pasted into `ip.txt`.
    Fix: save the raw command output without other text.""", also={"note": "the count of further unknown lines, not shown one by one"})
DEVICE_ATTRIBUTION = rule("RTC485", "inventory-device-attribution", "warning", "rtc cannot tell reliably which device a fact belongs to.", """
    What: a line names another device than its header or file name, a device gets the same
    fact twice, or loop captures that number devices by position disagree.
    Why: facts may sit on the wrong device (a device that printed nothing shifts the rest).
    Example: `gateway.txt` whose 4th line says `Iface:eth5`.
    Fix: capture one file per device, or print a header per device in the loop.""")
NPU_SMI_UNREADABLE = rule("RTC486", "npu-smi-unreadable", "error", "npu-smi output is missing, malformed or inconsistent.", """
    What: no table, a row cut short (error); unknown link codes, a non-square or
    asymmetric matrix, a diagonal other than X (warning).
    Why: the topology checks rely on the link matrix and chip table.
    Example: a `npu-smi info -t topo` capture truncated by a terminal.
    Fix: capture the raw output again, unedited.""", also={"warning": "unknown link codes, a non-square or asymmetric matrix, a bad "
                    "diagonal"})
SOURCES_DISAGREE = rule("RTC487", "inventory-sources-disagree", "error", "Two inventory sources disagree on a device's fact.", """
    What: e.g. /etc/hccn.conf `address_3` differs from `hccn_tool -i 3 -ip -g`.
    Why: one of them is stale; after a reboot the NPU takes the hccn.conf address and the
    rank table no longer matches it (one NPU unreachable, slow KV transfer).
    Example: hccn.conf edited by hand but the address never applied.
    Fix: make them agree (`hccn_tool -i 3 -ip -s address A netmask M`).""")
UNKNOWN_FILE = rule("RTC488", "inventory-unknown-file", "warning", "A file in the inventory folder is not recognised.", """
    What: rtc cannot tell which command produced a file, so it skips it.
    Why: facts in it are not used.
    Example: `notes.txt` in the capture folder.
    Fix: remove it, or save the raw output under a telling name (ip.txt, link.txt, ...).""")
MISSING_VALUE = rule("RTC489", "inventory-missing-value", "warning", "A device has no value in a capture.", """
    What: an empty `ipaddr:`, an empty `address_2=`, a command that printed nothing, an
    empty file.
    Why: e.g. the rank table gets no device_ip for that device.
    Example: `hccn_tool -i 2 -ip -g` printing nothing on an unconfigured NPU.
    Fix: configure it (`hccn_tool -i 2 -ip -s address A netmask M`) or leave the device out.""")

RULES = (UNREADABLE, HCCN_CONF_BAD_LINE, HCCN_CONF_DUPLICATE_KEY, BAD_VALUE, UNKNOWN_LINE, DEVICE_ATTRIBUTION, NPU_SMI_UNREADABLE, SOURCES_DISAGREE, UNKNOWN_FILE, MISSING_VALUE)
