//! Folding for names: full-width ASCII to ASCII, lower case, Traditional to
//! Simplified Chinese — character by character, keeping a map back to the
//! original text so that a match in the folded text names its original
//! bytes.

/// A folded text and, per folded byte, the original character's range.
#[derive(Debug, Clone)]
pub struct Folded {
    pub text: String,
    starts: Vec<usize>,
    ends: Vec<usize>,
}

/// One character folded: width, case, script.
fn fold_char(c: char, out: &mut String) {
    let c = match c as u32 {
        0xFF01..=0xFF5E => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        0x3000 => ' ',
        _ => c,
    };
    if c.is_ascii() {
        out.push(c.to_ascii_lowercase());
    } else if crate::index::tokenize::is_cjk(c) {
        let mut buf = [0u8; 4];
        out.push_str(&fast2s::convert(c.encode_utf8(&mut buf)));
    } else {
        out.extend(c.to_lowercase());
    }
}

impl Folded {
    pub fn new(text: &str) -> Folded {
        let mut folded = Folded {
            text: String::with_capacity(text.len()),
            starts: Vec::with_capacity(text.len()),
            ends: Vec::with_capacity(text.len()),
        };
        for (at, c) in text.char_indices() {
            let before = folded.text.len();
            fold_char(c, &mut folded.text);
            let added = folded.text.len() - before;
            folded.starts.extend(std::iter::repeat_n(at, added));
            folded
                .ends
                .extend(std::iter::repeat_n(at + c.len_utf8(), added));
        }
        folded
    }

    /// The original byte range of the folded range `start..end`.
    pub fn original(&self, start: usize, end: usize) -> (usize, usize) {
        (self.starts[start], self.ends[end - 1])
    }
}

/// The identity of a name: folded, inner whitespace collapsed, trimmed.
pub fn key(name: &str) -> String {
    Folded::new(name)
        .text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_and_maps_back() {
        let text = "用 ＰｏｓｔｇｒｅＳＱＬ 當資料庫";
        let f = Folded::new(text);
        assert_eq!(f.text, "用 postgresql 当资料库");
        let at = f.text.find("postgresql").unwrap();
        let (s, e) = f.original(at, at + "postgresql".len());
        assert_eq!(&text[s..e], "ＰｏｓｔｇｒｅＳＱＬ");
        assert_eq!(key("  Node.JS  "), "node.js");
        assert_eq!(key("臺北"), key("台北"));
        assert_eq!(key("資料庫"), "资料库");
    }
}
