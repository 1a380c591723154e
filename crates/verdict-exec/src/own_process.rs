//! This process's own command line as other processes see it
//! (`/proc/PID/cmdline`, `ps`): `rewrite_command_line` overwrites, in
//! place, arguments that hold a secret (a store URL's password), the way
//! `setproctitle` rewrites a title. Linux keeps the arguments in the
//! process's memory between `arg_start` and `arg_end` (fields 48 and 49 of
//! `/proc/self/stat`) and reads them from there; writing within each
//! argument, its terminating NUL kept, changes what they read. Must not
//! grow an argument, move the area or touch anything outside it.

use std::io;

/// Overwrites each argument of this process for which `replace` returns a
/// new text: the replacement, cut to the argument's length, then NULs up
/// to the argument's end (so no byte of the old text stays). How many
/// arguments were rewritten. Before the caller gets here the old text was
/// visible: the caller says so to its users.
pub fn rewrite_command_line(replace: &dyn Fn(&str) -> Option<String>) -> io::Result<usize> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    let (start, end) = argument_area(&stat).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "/proc/self/stat has no argument area (fields 48 and 49)",
        )
    })?;
    if end <= start {
        return Ok(0);
    }
    // SAFETY: [start, end) is this process's argument area as the kernel
    // reports it: mapped, writable (it is on the initial stack), and only
    // read by Rust's std through the `argv` pointers into it, whose
    // strings stay NUL-terminated at the same places (no terminator is
    // moved or removed). Nothing else holds a reference into it.
    let area = unsafe { std::slice::from_raw_parts_mut(start as *mut u8, end - start) };
    let mut rewritten = 0;
    let mut offset = 0;
    while offset < area.len() {
        let length = area[offset..]
            .iter()
            .position(|&byte| byte == 0)
            .unwrap_or(area.len() - offset);
        let argument = &mut area[offset..offset + length];
        if let Ok(text) = std::str::from_utf8(argument)
            && let Some(replacement) = replace(text)
            && replacement != text
        {
            let kept = replacement.len().min(length);
            argument[..kept].copy_from_slice(&replacement.as_bytes()[..kept]);
            argument[kept..].fill(0);
            rewritten += 1;
        }
        offset += length + 1;
    }
    Ok(rewritten)
}

/// `arg_start` and `arg_end` from the text of `/proc/PID/stat`: fields 48
/// and 49, counted after the command name (field 2, in parentheses, which
/// may itself hold spaces and parentheses).
fn argument_area(stat: &str) -> Option<(usize, usize)> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace();
    // `after_name` starts at field 3.
    let start = fields.nth(48 - 3)?.parse().ok()?;
    let end = fields.next()?.parse().ok()?;
    Some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_argument_area_is_read_after_a_command_name_with_spaces() {
        let mut fields: Vec<String> = (3..=52).map(|field| field.to_string()).collect();
        fields[48 - 3] = "140737488347000".to_string();
        fields[49 - 3] = "140737488347100".to_string();
        let stat = format!("4242 (odd ) name) {}", fields.join(" "));
        assert_eq!(
            argument_area(&stat),
            Some((140_737_488_347_000, 140_737_488_347_100))
        );
        assert_eq!(argument_area("4242 (x) R 1"), None);
    }
}
