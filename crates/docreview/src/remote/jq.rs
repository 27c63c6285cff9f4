//! `--jq EXPR`: a jq filter (the jaq crates) over a command's JSON answer.

use jaq_core::load::{Arena, File, Loader};
use jaq_core::{Compiler, Ctx, Vars, data, unwrap_valr};
use jaq_json::Val;
use serde_json::Value;

use super::Failure;

/// A jq expression, checked when the command line is read (so a typo fails before any
/// request is sent).
#[derive(Clone)]
pub struct JqFilter(String);

impl JqFilter {
    pub fn parse(code: &str) -> Result<Self, String> {
        compile(code, |_| Ok(()))?;
        Ok(JqFilter(code.to_string()))
    }

    /// Each output of the filter on `input`: strings as they are, other values as JSON.
    pub fn run(&self, input: &Value) -> Result<Vec<String>, Failure> {
        let input = jaq_json::read::parse_single(input.to_string().as_bytes())
            .map_err(|error| Failure::error(format!("--jq: reading the answer: {error}")))?;
        let mut lines = Vec::new();
        compile(&self.0, |filter| {
            let ctx = Ctx::<data::JustLut<Val>>::new(&filter.lut, Vars::new([]));
            for output in filter.id.run((ctx, input)).map(unwrap_valr) {
                match output {
                    Ok(Val::TStr(text)) => lines.push(String::from_utf8_lossy(&text).into_owned()),
                    Ok(value) => lines.push(value.to_string()),
                    Err(error) => return Err(format!("{error}")),
                }
            }
            Ok(())
        })
        .map_err(|error| Failure::error(format!("--jq: {error}")))?;
        Ok(lines)
    }
}

/// Parses and compiles `code` with jq's standard definitions, then hands the filter to `use_it`
/// (the filter borrows the parse arena, so it cannot outlive this call).
fn compile(
    code: &str,
    use_it: impl FnOnce(
        &jaq_core::compile::Filter<jaq_core::Native<data::JustLut<Val>>>,
    ) -> Result<(), String>,
) -> Result<(), String> {
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs());
    let funs = jaq_core::funs()
        .chain(jaq_std::funs())
        .chain(jaq_json::funs());
    let arena = Arena::default();
    let modules = Loader::new(defs)
        .load(&arena, File { code, path: () })
        .map_err(|_| format!("`{code}` is not a jq expression"))?;
    let filter = Compiler::default()
        .with_funs(funs)
        .compile(modules)
        .map_err(|errors| {
            let names: Vec<String> = errors
                .iter()
                .flat_map(|(_, undefined)| undefined.iter().map(|(name, _)| format!("`{name}`")))
                .collect();
            format!("{} is not defined in jq", names.join(", "))
        })?;
    use_it(&filter)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn picks_fields_and_prints_strings_bare() {
        let filter = JqFilter::parse(".reviews[] | .title").expect("parses");
        let input = json!({ "reviews": [{ "title": "Plan" }, { "title": "Notes" }] });
        assert_eq!(
            filter.run(&input).ok(),
            Some(vec!["Plan".into(), "Notes".into()])
        );
        let count = JqFilter::parse(".reviews | length").expect("parses");
        assert_eq!(count.run(&input).ok(), Some(vec!["2".into()]));
        let object = JqFilter::parse("{t: .reviews[0].title}").expect("parses");
        assert_eq!(
            object.run(&input).ok(),
            Some(vec![r#"{"t":"Plan"}"#.into()])
        );
    }

    #[test]
    fn a_bad_expression_is_refused_with_what_is_wrong() {
        assert!(JqFilter::parse(".reviews[").is_err());
        let undefined = JqFilter::parse("nosuch").err().unwrap_or_default();
        assert!(undefined.contains("`nosuch`"), "{undefined}");
        let runtime = JqFilter::parse(".a + 1").expect("parses");
        assert!(runtime.run(&json!({ "a": "x" })).is_err());
    }
}
