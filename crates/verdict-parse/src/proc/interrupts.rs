//! /proc/interrupts and /proc/softirqs: one table format, a header of CPU
//! columns, then one row per source with a count per CPU (and, for
//! interrupts, a description). The one parser of both files.
//!
//! Source: proc(5) ("/proc/interrupts", "/proc/softirqs") and the kernel's
//! `show_interrupts` / `arch_show_interrupts` (fs/proc/interrupts.c,
//! arch/x86/kernel/irq.c): a numbered line is `N: counts CHIP HWIRQ-TYPE
//! DEVICE[, DEVICE...]`, a named line is `NAME: counts Description`; a few
//! named lines (`ERR`, `MIS`) carry one count, not one per CPU. Must not
//! read the file.

use std::collections::BTreeMap;

/// One source's count summed over every CPU, by the name it is reported
/// under (see [`parse_table`]).
pub type SourceCounts = BTreeMap<String, u64>;

/// Parses /proc/interrupts or /proc/softirqs: each source's count summed
/// over the CPUs. A numbered interrupt is named `N:DEVICE` (its device
/// names after the chip and the hardware IRQ columns, so the same line keeps
/// its name when its number stays), a named one by its name (`LOC`,
/// `TIMER`). Lines that do not parse (no colon, no count) are skipped: the
/// format has grown over the years and a new line must not lose the
/// others. `None` when there is no CPU header.
pub fn parse_table(text: &str) -> Option<SourceCounts> {
    let mut lines = text.lines();
    let header = lines.next()?;
    let cpus = header
        .split_whitespace()
        .filter(|column| column.starts_with("CPU"))
        .count();
    if cpus == 0 {
        return None;
    }
    let mut counts = SourceCounts::new();
    for line in lines {
        let Some((label, rest)) = line.split_once(':') else {
            continue;
        };
        let label = label.trim();
        if label.is_empty() {
            continue;
        }
        let mut fields = rest.split_whitespace().peekable();
        let mut total = 0u64;
        let mut columns = 0;
        while columns < cpus {
            let Some(count) = fields.peek().and_then(|field| field.parse::<u64>().ok()) else {
                break;
            };
            fields.next();
            total = total.saturating_add(count);
            columns += 1;
        }
        if columns == 0 {
            continue;
        }
        let description: Vec<&str> = fields.collect();
        let name = if label.bytes().all(|byte| byte.is_ascii_digit()) {
            // CHIP HWIRQ-TYPE DEVICE...: the device is what a reader knows.
            let device = if description.len() > 2 {
                description[2..].join(" ")
            } else {
                description.join(" ")
            };
            if device.is_empty() {
                label.to_string()
            } else {
                format!("{label}:{device}")
            }
        } else {
            label.to_string()
        };
        let entry = counts.entry(name).or_insert(0);
        *entry = entry.saturating_add(total);
    }
    Some(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_named_and_single_count_lines() {
        let text = "           CPU0       CPU1       \n\
                    \x20 0:         45          0   IO-APIC   2-edge      timer\n\
                    \x2036:          0     130211 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n\
                    \x2011:          3          4   IO-APIC  11-fasteoi   ehci_hcd:usb1, uhci_hcd:usb2\n\
                    NMI:          0          0   Non-maskable interrupts\n\
                    LOC:     222457     234206   Local timer interrupts\n\
                    ERR:          7\n\
                    MIS:          0\n\
                    garbage without a colon\n";
        let counts = parse_table(text).unwrap();
        assert_eq!(counts["0:timer"], 45);
        assert_eq!(counts["36:virtio1-req.0"], 130_211);
        assert_eq!(counts["11:ehci_hcd:usb1, uhci_hcd:usb2"], 7);
        assert_eq!(counts["LOC"], 456_663);
        assert_eq!(counts["NMI"], 0);
        assert_eq!(counts["ERR"], 7);
        assert_eq!(counts.len(), 7);
    }

    #[test]
    fn softirqs_rows() {
        let text = "                    CPU0       CPU1       \n\
                    \x20         HI:          0          0\n\
                    \x20      TIMER:      44336      41624\n\
                    \x20        RCU:     132780     152890\n";
        let counts = parse_table(text).unwrap();
        assert_eq!(counts["TIMER"], 85_960);
        assert_eq!(counts["HI"], 0);
        assert_eq!(counts["RCU"], 285_670);
    }

    #[test]
    fn no_header_is_none() {
        assert_eq!(parse_table(""), None);
        assert_eq!(parse_table("LOC: 1 2\n"), None);
    }
}
