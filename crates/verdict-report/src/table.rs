//! A minimal column-aligned text table (ASCII, for email) and its markdown
//! and CSV renderings. The first column is left-aligned, the rest right.

use crate::format::{csv_field, markdown_cell, plain_text};

/// Rows of cells under a header.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Columns (by index) aligned left besides the first.
    pub left: Vec<usize>,
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

    pub fn text(&self) -> String {
        let columns = self.header.len();
        let mut widths = vec![0usize; columns];
        for row in std::iter::once(&self.header).chain(&self.rows) {
            for (index, cell) in row.iter().enumerate().take(columns) {
                widths[index] = widths[index].max(cell.chars().count());
            }
        }
        let mut output = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            for (index, cell) in row.iter().enumerate().take(columns) {
                let cell = plain_text(cell);
                if index > 0 {
                    line.push_str("  ");
                }
                let pad = widths[index].saturating_sub(cell.chars().count());
                if index == 0 || self.left.contains(&index) {
                    line.push_str(&cell);
                    line.push_str(&" ".repeat(pad));
                } else {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(&cell);
                }
            }
            output.push_str(line.trim_end());
            output.push('\n');
        }
        output
    }

    pub fn markdown(&self) -> String {
        let mut output = String::new();
        let line = |cells: &[String]| {
            format!(
                "| {} |\n",
                cells
                    .iter()
                    .map(|cell| markdown_cell(cell))
                    .collect::<Vec<_>>()
                    .join(" | ")
            )
        };
        output.push_str(&line(&self.header));
        output.push_str(&format!(
            "|{}\n",
            (0..self.header.len())
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
                    .map(|cell| csv_field(cell))
                    .collect::<Vec<_>>()
                    .join(","),
            );
            output.push('\n');
        }
        output
    }
}
