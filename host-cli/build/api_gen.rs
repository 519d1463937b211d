//! Generates the hosts' API types from `wit/hmg.wit` (the `types`
//! interface), so that every record and enum is declared once, in the WIT:
//!
//! - `api.rs`: a serde + JSON Schema twin of each record, enum and variant,
//!   with the WIT doc comments as docs (and so as schema descriptions),
//!   snake_case JSON names, `None` fields left out (kept as `null` where
//!   the field's doc says "JSON: null when absent."), enums as snake_case
//!   strings (also `clap::ValueEnum`, with `ALL` and `as_str`);
//! - `convert.rs`: `From` both ways between those and wasmtime's `bindgen!`
//!   types, field by field and case by case, so that a WIT change that is not
//!   mirrored cannot compile.
//!
//! The `error` variant is left out: hosts map it to their own errors.

use std::fmt::Write;

use wit_parser::{Docs, Resolve, Type, TypeDefKind, TypeId};

/// The generated sources: (api types, conversions).
pub fn generate(wit_dir: &std::path::Path) -> (String, String) {
    let mut resolve = Resolve::default();
    let (package, _) = resolve
        .push_dir(wit_dir)
        .unwrap_or_else(|e| panic!("cannot parse {}: {e:#}", wit_dir.display()));
    let types = resolve.packages[package]
        .interfaces
        .get("types")
        .copied()
        .expect("wit/hmg.wit has an interface `types`");
    let mut api = String::new();
    let mut convert = String::new();
    for (name, &id) in &resolve.interfaces[types].types {
        if name == "error" {
            continue;
        }
        let g = Gen {
            resolve: &resolve,
            name: pascal(name),
        };
        match &resolve.types[id].kind {
            TypeDefKind::Record(record) => {
                g.record(&mut api, &mut convert, id, record);
            }
            TypeDefKind::Enum(e) => g.enumeration(&mut api, &mut convert, id, e),
            TypeDefKind::Variant(v) => g.variant(&mut api, &mut convert, id, v),
            other => panic!(
                "wit type `{name}`: {} is not supported here",
                other.as_str()
            ),
        }
    }
    (api, convert)
}

struct Gen<'a> {
    resolve: &'a Resolve,
    name: String,
}

impl Gen<'_> {
    fn record(&self, api: &mut String, convert: &mut String, id: TypeId, r: &wit_parser::Record) {
        let name = &self.name;
        let default = self.defaultable(id);
        docs(api, &self.resolve.types[id].docs, "");
        let derives = if default { ", Default" } else { "" };
        writeln!(
            api,
            "#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema{derives})]\npub struct {name} {{"
        )
        .unwrap();
        for f in &r.fields {
            docs(api, &f.docs, "    ");
            let field = field_name(&f.name);
            if field != snake(&f.name) {
                writeln!(api, "    #[serde(rename = \"{}\")]", snake(&f.name)).unwrap();
            }
            if self.is_option(&f.ty) {
                if keeps_null(&f.docs) {
                    api.push_str("    #[serde(default)]\n");
                } else {
                    api.push_str(
                        "    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n",
                    );
                }
            }
            writeln!(api, "    pub {field}: {},", self.rust_type(&f.ty)).unwrap();
        }
        api.push_str("}\n\n");

        for (from, to) in [("wit", "api"), ("api", "wit")] {
            writeln!(
                convert,
                "impl From<{from}::{name}> for {to}::{name} {{\n    fn from(v: {from}::{name}) -> Self {{\n        {to}::{name} {{"
            )
            .unwrap();
            for f in &r.fields {
                let field = field_name(&f.name);
                let value = self.convert_expr(&f.ty, &format!("v.{field}"));
                writeln!(convert, "            {field}: {value},").unwrap();
            }
            convert.push_str("        }\n    }\n}\n\n");
        }
    }

    fn enumeration(
        &self,
        api: &mut String,
        convert: &mut String,
        id: TypeId,
        e: &wit_parser::Enum,
    ) {
        let name = &self.name;
        docs(api, &self.resolve.types[id].docs, "");
        writeln!(
            api,
            "#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, clap::ValueEnum)]\n\
             #[serde(rename_all = \"snake_case\")]\n#[value(rename_all = \"snake_case\")]\npub enum {name} {{"
        )
        .unwrap();
        for case in &e.cases {
            docs(api, &case.docs, "    ");
            writeln!(api, "    {},", pascal(&case.name)).unwrap();
        }
        api.push_str("}\n\n");
        let all: Vec<String> = e
            .cases
            .iter()
            .map(|c| format!("{name}::{}", pascal(&c.name)))
            .collect();
        let names: Vec<String> = e
            .cases
            .iter()
            .map(|c| {
                format!(
                    "            {name}::{} => \"{}\",",
                    pascal(&c.name),
                    snake(&c.name)
                )
            })
            .collect();
        writeln!(
            api,
            "impl {name} {{\n    /// Every value, in WIT order.\n    pub const ALL: &'static [{name}] = &[{}];\n\n    \
             /// The JSON name (snake_case).\n    pub fn as_str(self) -> &'static str {{\n        match self {{\n{}\n        }}\n    }}\n}}\n",
            all.join(", "),
            names.join("\n")
        )
        .unwrap();
        for (from, to) in [("wit", "api"), ("api", "wit")] {
            let arms = e.cases.iter().map(|c| {
                let case = pascal(&c.name);
                format!("{from}::{name}::{case} => {to}::{name}::{case},")
            });
            from_by_match(convert, name, from, to, arms);
        }
    }

    fn variant(&self, api: &mut String, convert: &mut String, id: TypeId, v: &wit_parser::Variant) {
        let name = &self.name;
        docs(api, &self.resolve.types[id].docs, "");
        writeln!(
            api,
            "#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]\n#[serde(rename_all = \"snake_case\")]\npub enum {name} {{"
        )
        .unwrap();
        for case in &v.cases {
            docs(api, &case.docs, "    ");
            match &case.ty {
                Some(ty) => writeln!(api, "    {}({}),", pascal(&case.name), self.rust_type(ty)),
                None => writeln!(api, "    {},", pascal(&case.name)),
            }
            .unwrap();
        }
        api.push_str("}\n\n");
        for (from, to) in [("wit", "api"), ("api", "wit")] {
            let arms = v.cases.iter().map(|c| {
                let case = pascal(&c.name);
                match &c.ty {
                    Some(ty) => format!(
                        "{from}::{name}::{case}(x) => {to}::{name}::{case}({}),",
                        self.convert_expr(ty, "x")
                    ),
                    None => format!("{from}::{name}::{case} => {to}::{name}::{case},"),
                }
            });
            from_by_match(convert, name, from, to, arms);
        }
    }

    fn rust_type(&self, ty: &Type) -> String {
        match ty {
            Type::Bool => "bool".into(),
            Type::U8 => "u8".into(),
            Type::U16 => "u16".into(),
            Type::U32 => "u32".into(),
            Type::U64 => "u64".into(),
            Type::S8 => "i8".into(),
            Type::S16 => "i16".into(),
            Type::S32 => "i32".into(),
            Type::S64 => "i64".into(),
            Type::F32 => "f32".into(),
            Type::F64 => "f64".into(),
            Type::Char => "char".into(),
            Type::String => "String".into(),
            Type::ErrorContext => panic!("error-context is not supported here"),
            Type::Id(id) => {
                let def = &self.resolve.types[*id];
                match &def.kind {
                    TypeDefKind::Option(t) => format!("Option<{}>", self.rust_type(t)),
                    TypeDefKind::List(t) => format!("Vec<{}>", self.rust_type(t)),
                    TypeDefKind::Type(t) => self.rust_type(t),
                    _ => pascal(def.name.as_deref().expect("named type")),
                }
            }
        }
    }

    fn is_option(&self, ty: &Type) -> bool {
        matches!(ty, Type::Id(id) if matches!(self.resolve.types[*id].kind, TypeDefKind::Option(_)))
    }

    /// Whether `Default` can be derived (no enum or variant inside).
    fn defaultable(&self, id: TypeId) -> bool {
        match &self.resolve.types[id].kind {
            TypeDefKind::Record(r) => r.fields.iter().all(|f| self.type_defaultable(&f.ty)),
            TypeDefKind::Option(_) | TypeDefKind::List(_) => true,
            TypeDefKind::Type(t) => self.type_defaultable(t),
            _ => false,
        }
    }

    fn type_defaultable(&self, ty: &Type) -> bool {
        match ty {
            Type::Id(id) => self.defaultable(*id),
            _ => true,
        }
    }

    /// The expression converting `expr` of this WIT type between the two sides.
    fn convert_expr(&self, ty: &Type, expr: &str) -> String {
        let Type::Id(id) = ty else {
            return expr.to_owned();
        };
        match &self.resolve.types[*id].kind {
            TypeDefKind::Option(t) => {
                let inner = self.convert_expr(t, "x");
                if inner == "x" {
                    expr.to_owned()
                } else {
                    format!("{expr}.map(|x| {inner})")
                }
            }
            TypeDefKind::List(t) => {
                let inner = self.convert_expr(t, "x");
                if inner == "x" {
                    expr.to_owned()
                } else {
                    format!("{expr}.into_iter().map(|x| {inner}).collect()")
                }
            }
            TypeDefKind::Type(t) => self.convert_expr(t, expr),
            _ => format!("{expr}.into()"),
        }
    }
}

/// `impl From<from::name> for to::name` as one exhaustive match.
fn from_by_match(
    out: &mut String,
    name: &str,
    from: &str,
    to: &str,
    arms: impl Iterator<Item = String>,
) {
    writeln!(
        out,
        "impl From<{from}::{name}> for {to}::{name} {{\n    fn from(v: {from}::{name}) -> Self {{\n        match v {{"
    )
    .unwrap();
    for arm in arms {
        writeln!(out, "            {arm}").unwrap();
    }
    out.push_str("        }\n    }\n}\n\n");
}

/// The doc marker of an option field that JSON shows as `null` rather than
/// leaving it out.
const KEEP_NULL: &str = "JSON: null when absent.";

fn keeps_null(docs: &Docs) -> bool {
    docs.contents
        .as_deref()
        .is_some_and(|d| d.contains(KEEP_NULL))
}

fn docs(out: &mut String, docs: &Docs, indent: &str) {
    if let Some(text) = &docs.contents {
        for line in text.lines() {
            writeln!(out, "{indent}#[doc = {:?}]", line).unwrap();
        }
    }
}

/// `store-stats` → `StoreStats`.
fn pascal(kebab: &str) -> String {
    kebab
        .split('-')
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// `tenant-id` → `tenant_id`.
fn snake(kebab: &str) -> String {
    kebab.replace('-', "_")
}

/// The Rust field name wasmtime's `bindgen!` gives a WIT field.
fn field_name(kebab: &str) -> String {
    let name = snake(kebab);
    const KEYWORDS: &[&str] = &[
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum",
        "extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move",
        "mut", "pub", "ref", "return", "self", "static", "struct", "super", "trait", "true",
        "type", "unsafe", "use", "where", "while", "yield",
    ];
    if KEYWORDS.contains(&name.as_str()) {
        name + "_"
    } else {
        name
    }
}
