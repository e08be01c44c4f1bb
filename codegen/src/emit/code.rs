//! [`Code`]: Rust source written line by line with its indentation, as a person writes it.
//!
//! The emitters write text rather than token trees, so the output needs no formatter (and the
//! build of every dependent no `syn` or `prettyplease`): each emitter decides where its lines
//! break, and `Code` keeps the indentation.

/// Rust source under construction.
#[derive(Default)]
pub(crate) struct Code {
    text: String,
    depth: usize,
}

const INDENT: &str = "    ";

impl Code {
    pub fn new() -> Self {
        Code::default()
    }

    /// Writes `text` at the current indentation; a multi-line `text` is indented line by
    /// line, relative to its own first line.
    pub fn line(&mut self, text: impl AsRef<str>) {
        for line in text.as_ref().lines() {
            if line.is_empty() {
                self.text.push('\n');
            } else {
                for _ in 0..self.depth {
                    self.text.push_str(INDENT);
                }
                self.text.push_str(line);
                self.text.push('\n');
            }
        }
    }

    /// An empty line.
    pub fn blank(&mut self) {
        self.text.push('\n');
    }

    /// `/// text` for each line of `text` (which starts with the space after the slashes).
    pub fn doc(&mut self, text: &str) {
        for line in text.lines() {
            self.line(format!("///{line}"));
        }
    }

    /// `head {`, then the lines that follow are indented one level deeper.
    pub fn open(&mut self, head: impl AsRef<str>) {
        let head = head.as_ref();
        if head.is_empty() {
            self.line("{");
        } else {
            self.line(format!("{head} {{"));
        }
        self.depth += 1;
    }

    /// Ends the innermost block with `}`.
    pub fn close(&mut self) {
        self.close_with("");
    }

    /// Ends the innermost block with `}` followed by `tail` (`;`, `,`, `)` ...).
    pub fn close_with(&mut self, tail: &str) {
        self.depth -= 1;
        self.line(format!("}}{tail}"));
    }

    /// Writes `line` as it is and indents what follows (`&[`, `(`).
    pub fn open_line(&mut self, line: impl AsRef<str>) {
        self.line(line);
        self.depth += 1;
    }

    /// Ends what [`Code::open_line`] opened with `line` (`];`, `)`).
    pub fn close_line(&mut self, line: impl AsRef<str>) {
        self.depth -= 1;
        self.line(line);
    }

    /// `} else {` and the like: ends a block and opens the next at the same depth.
    pub fn reopen(&mut self, head: &str) {
        self.depth -= 1;
        self.line(format!("}} {head} {{"));
        self.depth += 1;
    }

    /// A block with a body written by `body`.
    pub fn block(&mut self, head: impl AsRef<str>, body: impl FnOnce(&mut Code)) {
        self.open(head);
        body(self);
        self.close();
    }

    /// Writes another piece of code here, at the current indentation.
    pub fn append(&mut self, code: Code) {
        self.line(code.text);
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    pub fn finish(self) -> String {
        debug_assert_eq!(self.depth, 0, "unbalanced blocks");
        self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_indent_their_lines() {
        let mut code = Code::new();
        code.doc(" A thing.");
        code.open("fn f(x: i32) -> i32");
        code.open("if x > 0");
        code.line("x");
        code.reopen("else");
        code.line("let y = [\n    1,\n];");
        code.line("-x");
        code.close();
        code.close();
        assert_eq!(
            code.finish(),
            "/// A thing.\nfn f(x: i32) -> i32 {\n    if x > 0 {\n        x\n    } else {\n        let y = [\n            1,\n        ];\n        -x\n    }\n}\n"
        );
    }
}
