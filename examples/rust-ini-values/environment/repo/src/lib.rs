//! Read INI files: `[section]` headers, `key = value` pairs and `;` or `#` comment lines.
//!
//! ```
//! let ini = tinyini::Ini::parse("[server]\nport = 8080\n").unwrap();
//! assert_eq!(ini.get("server", "port"), Some("8080"));
//! ```

use std::collections::BTreeMap;
use std::fmt;

/// Why a text is not INI, and on which line (counted from 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

/// A parsed INI file. Keys before the first header belong to the section "".
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Ini {
    sections: BTreeMap<String, BTreeMap<String, String>>,
}

impl Ini {
    /// Parses `text`. Keys and values are trimmed; a key given twice keeps its last value.
    pub fn parse(text: &str) -> Result<Ini, ParseError> {
        let mut ini = Ini::default();
        let mut section = String::new();
        for (index, raw) in text.lines().enumerate() {
            let error = |message: &str| ParseError {
                line: index + 1,
                message: message.to_string(),
            };
            let line = raw.trim();
            if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
                continue;
            }
            if let Some(header) = line.strip_prefix('[') {
                let name = header
                    .strip_suffix(']')
                    .ok_or_else(|| error("unclosed section header"))?;
                section = name.trim().to_string();
                ini.sections.entry(section.clone()).or_default();
                continue;
            }
            let parts: Vec<&str> = line.split('=').collect();
            if parts.len() != 2 {
                return Err(error("expected `key = value`"));
            }
            let key = parts[0].trim();
            if key.is_empty() {
                return Err(error("empty key"));
            }
            ini.sections
                .entry(section.clone())
                .or_default()
                .insert(key.to_string(), parts[1].trim().to_string());
        }
        Ok(ini)
    }

    /// The value of `key` in `section`.
    pub fn get(&self, section: &str, key: &str) -> Option<&str> {
        self.sections.get(section)?.get(key).map(String::as_str)
    }

    /// The section names, in order.
    pub fn sections(&self) -> impl Iterator<Item = &str> {
        self.sections.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_before_any_header() {
        let ini = Ini::parse("name = demo\n[a]\nx = 1\n").unwrap();
        assert_eq!(ini.get("", "name"), Some("demo"));
        assert_eq!(ini.get("a", "x"), Some("1"));
    }

    #[test]
    fn unclosed_header() {
        let err = Ini::parse("[a]\nx = 1\n[b\n").unwrap_err();
        assert_eq!(err.to_string(), "line 3: unclosed section header");
    }
}
