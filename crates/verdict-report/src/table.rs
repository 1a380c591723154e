//! A minimal column-aligned text table (ASCII, for email) and its markdown
//! and CSV renderings. The first column is left-aligned, the rest right.
//! Within a width ([`Table::text_within`], `--width N`, the email form) a
//! table that does not fit is stacked: one block per row, its first cell
//! as the block's first line and every other column below it as
//! `header: value`, wrapped.
//! Every cell goes through its format's escaping function (`escape`) before
//! it is measured, so widths are those of what is printed; widths are
//! display columns (a CJK character counts two). Must not format numbers.

use crate::escape;
use unicode_width::UnicodeWidthStr;

/// Rows of cells under a header.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Columns (by index) aligned left besides the first.
    pub left: Vec<usize>,
}

/// Display width of already-escaped text, in terminal columns.
pub fn display_width(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

impl Table {
    pub fn new(header: Vec<String>) -> Table {
        Table {
            header,
            rows: Vec::new(),
            left: Vec::new(),
        }
    }

    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    /// Plain text: columns two spaces apart, each padded to its widest
    /// escaped cell (cells trimmed of surrounding spaces); trailing spaces trimmed (a line ending in a space is a
    /// soft break in format=flowed email), so with a right-aligned last
    /// column every line has the same width.
    pub fn text(&self) -> String {
        let columns = self.header.len();
        let escaped: Vec<Vec<String>> = std::iter::once(&self.header)
            .chain(&self.rows)
            .map(|row| {
                (0..columns)
                    .map(|index| {
                        row.get(index)
                            .map_or_else(String::new, |cell| escape::text(cell).trim().to_string())
                    })
                    .collect()
            })
            .collect();
        let mut widths = vec![0usize; columns];
        for row in &escaped {
            for (index, cell) in row.iter().enumerate() {
                widths[index] = widths[index].max(display_width(cell));
            }
        }
        let mut output = String::new();
        for row in &escaped {
            let mut line = String::new();
            for (index, cell) in row.iter().enumerate() {
                if index > 0 {
                    line.push_str("  ");
                }
                let pad = widths[index].saturating_sub(display_width(cell));
                if index == 0 || self.left.contains(&index) {
                    line.push_str(cell);
                    line.push_str(&" ".repeat(pad));
                } else {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(cell);
                }
            }
            output.push_str(line.trim_end());
            output.push('\n');
        }
        output
    }

    /// Plain text within `width` columns: [`Table::text`] when every line
    /// fits, else the stacked form (see the module documentation), every
    /// line at most `width` columns (a word longer than a line is cut).
    pub fn text_within(&self, width: usize) -> String {
        let natural = self.text();
        if natural.lines().all(|line| display_width(line) <= width) {
            return natural;
        }
        let header: Vec<String> = self
            .header
            .iter()
            .map(|cell| escape::text(cell).trim().to_string())
            .collect();
        let mut output = String::new();
        for (index, row) in self.rows.iter().enumerate() {
            if index > 0 {
                output.push('\n');
            }
            let mut cells = row.iter().map(|cell| escape::text(cell).trim().to_string());
            let first = cells.next().unwrap_or_default();
            for line in crate::email::wrap(&first, 0, 4, width) {
                output.push_str(&line);
                output.push('\n');
            }
            for (name, value) in header.iter().skip(1).zip(cells) {
                if value.is_empty() {
                    continue;
                }
                let text = if name.is_empty() {
                    value
                } else {
                    format!("{name}: {value}")
                };
                for line in crate::email::wrap(&text, 2, 6, width) {
                    output.push_str(&line);
                    output.push('\n');
                }
            }
        }
        output
    }

    /// [`Table::text`], or [`Table::text_within`] a width when one is given.
    pub fn text_width(&self, width: Option<usize>) -> String {
        match width {
            Some(width) => self.text_within(width),
            None => self.text(),
        }
    }

    pub fn markdown(&self) -> String {
        let mut output = String::new();
        let columns = self.header.len();
        let line = |cells: &[String]| {
            format!(
                "| {} |\n",
                (0..columns)
                    .map(|index| cells
                        .get(index)
                        .map_or_else(String::new, |cell| escape::markdown(cell)))
                    .collect::<Vec<_>>()
                    .join(" | ")
            )
        };
        output.push_str(&line(&self.header));
        output.push_str(&format!(
            "|{}\n",
            (0..columns)
                .map(|index| if index == 0 || self.left.contains(&index) {
                    " --- |"
                } else {
                    " ---: |"
                })
                .collect::<String>()
        ));
        for row in &self.rows {
            output.push_str(&line(row));
        }
        output
    }

    pub fn csv(&self) -> String {
        let mut output = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            output.push_str(
                &row.iter()
                    .map(|cell| escape::csv(cell))
                    .collect::<Vec<_>>()
                    .join(","),
            );
            output.push('\n');
        }
        output
    }
}
