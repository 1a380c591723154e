//! The Kconfig macro language (Documentation/kbuild/kconfig-macro-language.rst,
//! scripts/kconfig/preprocess.c): simple (`:=`) and recursive (`=`)
//! variables, `+=`, user functions with `$(1)`..., the built-in functions
//! `shell`, `info`, `warning-if`, `error-if`, `filename`, `lineno`, and the
//! environment as the last resort. `$(shell,...)` goes through a
//! [`ProbeRunner`]: this module never starts a process itself; the runner
//! either runs the command (through verdict-exec, in the binary) or answers
//! with an opaque probe marker that the evaluator resolves from the config.

use std::collections::HashMap;

/// Runs (or declines to run) the shell commands of `$(shell,...)`.
pub trait ProbeRunner {
    /// The command's standard output, or `None` when the command is not run
    /// (the caller then uses an opaque probe marker).
    fn shell(&self, command: &str) -> Option<String>;
}

/// A runner that runs nothing: every probe stays unknown.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProbes;

impl ProbeRunner for NoProbes {
    fn shell(&self, _command: &str) -> Option<String> {
        None
    }
}

/// The prefix of the word a probe that was not run expands to.
pub const PROBE_MARKER: &str = "__verdict_probe_";

/// True when `text` contains the result of a probe that was not run.
pub fn mentions_probe(text: &str) -> bool {
    text.contains(PROBE_MARKER)
}

#[derive(Debug, Clone)]
struct Variable {
    value: String,
    recursive: bool,
}

/// The preprocessor state of one parse.
pub(crate) struct Preprocessor<'a> {
    variables: HashMap<String, Variable>,
    environment: HashMap<String, String>,
    runner: &'a dyn ProbeRunner,
    probes: std::cell::Cell<usize>,
    /// (file, line) for `$(filename)` and `$(lineno)`.
    pub(crate) position: (String, u32),
    /// Messages from `$(info,...)`, `$(warning-if,...)` and `$(error-if,...)`.
    pub(crate) messages: std::cell::RefCell<Vec<String>>,
    depth: std::cell::Cell<usize>,
}

const MAXIMUM_DEPTH: usize = 1000;

impl<'a> Preprocessor<'a> {
    /// A preprocessor whose unknown variables come from `environment`.
    pub fn new(environment: HashMap<String, String>, runner: &'a dyn ProbeRunner) -> Self {
        Self {
            variables: HashMap::new(),
            environment,
            runner,
            probes: std::cell::Cell::new(0),
            position: (String::new(), 0),
            messages: std::cell::RefCell::new(Vec::new()),
            depth: std::cell::Cell::new(0),
        }
    }

    /// `NAME := VALUE`, `NAME = VALUE` or `NAME += VALUE` (`operator` is
    /// `:=`, `=` or `+=`), as variable_add() does.
    pub fn assign(&mut self, name: &str, operator: &str, value: &str) {
        let name = self.expand(name);
        let existing = self.variables.get(&name).cloned();
        let (recursive, append) = match (operator, &existing) {
            ("+=", Some(variable)) => (variable.recursive, true),
            ("+=", None) => (true, false),
            (":=", _) => (false, false),
            _ => (true, false),
        };
        let new_value = if recursive {
            value.to_string()
        } else {
            self.expand(value)
        };
        let value = match (append, existing) {
            (true, Some(variable)) => format!("{} {new_value}", variable.value),
            _ => new_value,
        };
        self.variables.insert(name, Variable { value, recursive });
    }

    /// Expands every `$(...)` in `text`.
    pub fn expand(&self, text: &str) -> String {
        self.expand_with(text, &[])
    }

    fn expand_with(&self, text: &str, arguments: &[String]) -> String {
        let mut output = String::new();
        let mut rest = text;
        while let Some(start) = rest.find('$') {
            output.push_str(&rest[..start]);
            let tail = &rest[start + 1..];
            if !tail.starts_with('(') {
                output.push('$');
                rest = tail;
                continue;
            }
            let mut depth = 0usize;
            let mut end = None;
            for (offset, byte) in tail.bytes().enumerate().skip(1) {
                match byte {
                    b'(' => depth += 1,
                    b')' if depth == 0 => {
                        end = Some(offset);
                        break;
                    }
                    b')' => depth -= 1,
                    _ => {}
                }
            }
            let Some(end) = end else {
                // Unterminated: the kernel stops with an error; keep the text.
                output.push('$');
                output.push_str(tail);
                return output;
            };
            output.push_str(&self.clause(&tail[1..end], arguments));
            rest = &tail[end + 1..];
        }
        output.push_str(rest);
        output
    }

    fn clause(&self, clause: &str, arguments: &[String]) -> String {
        if let Ok(number) = clause.parse::<usize>() {
            if number > 0 && number <= arguments.len() {
                return arguments[number - 1].clone();
            }
        }
        if self.depth.get() > MAXIMUM_DEPTH {
            return String::new();
        }
        self.depth.set(self.depth.get() + 1);
        let mut parts = Vec::new();
        let mut depth = 0i32;
        let mut start = 0;
        for (offset, byte) in clause.bytes().enumerate() {
            match byte {
                b',' if depth == 0 => {
                    parts.push(&clause[start..offset]);
                    start = offset + 1;
                }
                b'(' => depth += 1,
                b')' => depth -= 1,
                _ => {}
            }
        }
        parts.push(&clause[start..]);
        let name = self.expand_with(parts[0], arguments);
        let values: Vec<String> = parts[1..]
            .iter()
            .map(|part| self.expand_with(part, arguments))
            .collect();
        let result = self.call(&name, &values);
        self.depth.set(self.depth.get() - 1);
        result
    }

    fn call(&self, name: &str, values: &[String]) -> String {
        if let Some(variable) = self.variables.get(name) {
            return if variable.recursive {
                self.expand_with(&variable.value, values)
            } else {
                variable.value.clone()
            };
        }
        match (name, values) {
            ("shell", [command]) => return self.shell(command),
            ("info", [message]) => {
                self.messages.borrow_mut().push(message.clone());
                return String::new();
            }
            ("warning-if" | "error-if", [condition, message]) => {
                if condition == "y" {
                    let (file, line) = &self.position;
                    self.messages
                        .borrow_mut()
                        .push(format!("{file}:{line}: {message}"));
                }
                return String::new();
            }
            ("filename", []) => return self.position.0.clone(),
            ("lineno", []) => return self.position.1.to_string(),
            _ => {}
        }
        if values.is_empty() {
            if let Some(value) = self.environment.get(name) {
                return value.clone();
            }
        }
        String::new()
    }

    fn shell(&self, command: &str) -> String {
        if !mentions_probe(command) {
            if let Some(output) = self.runner.shell(command) {
                let trimmed = output.trim_end_matches('\n');
                return trimmed.replace('\n', " ");
            }
        }
        let number = self.probes.get();
        self.probes.set(number + 1);
        format!("{PROBE_MARKER}{number}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Echo;
    impl ProbeRunner for Echo {
        fn shell(&self, command: &str) -> Option<String> {
            Some(format!("ran[{command}]\n"))
        }
    }

    #[test]
    fn user_functions_arguments_and_environment() {
        let environment = HashMap::from([("CC".to_string(), "gcc".to_string())]);
        let mut preprocessor = Preprocessor::new(environment, &Echo);
        preprocessor.assign(
            "if-success",
            "=",
            "$(shell,{ $(1); } && echo \"$(2)\" || echo \"$(3)\")",
        );
        preprocessor.assign("success", "=", "$(if-success,$(1),y,n)");
        preprocessor.assign("cc-option", "=", "$(success,$(CC) -Werror $(1) .tmp_$$)");
        assert_eq!(
            preprocessor.expand("$(cc-option,-mfoo)"),
            "ran[{ gcc -Werror -mfoo .tmp_$$; } && echo \"y\" || echo \"n\"]"
        );
        preprocessor.assign("simple", ":=", "$(CC)-x");
        preprocessor.assign("simple", "+=", "more");
        assert_eq!(preprocessor.expand("<$(simple)>"), "<gcc-x more>");
        assert_eq!(preprocessor.expand("$(UNDEFINED)|$ x"), "|$ x");
    }

    #[test]
    fn probes_not_run_become_markers() {
        let preprocessor = Preprocessor::new(HashMap::new(), &NoProbes);
        let first = preprocessor.expand("$(shell,true)");
        assert!(mentions_probe(&first), "{first}");
        assert_ne!(first, preprocessor.expand("$(shell,true)"));
    }
}
