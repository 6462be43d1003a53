//! The one rule between the component's WIT values and the JSON of a
//! scenario, in both directions, from the WIT types alone (no per-function
//! mapping). `tests/conformance/README.md` ("Values") states it for every
//! runner; the Node runner applies the same rule to jco's values.
//!
//! - record: an object keyed by field name, `-` written `_`;
//! - enum: the case name; flags: the list of the flags set;
//! - variant: `{"kind": case, "value": payload}` (`value` null without one);
//! - option: `null` or the value; result: `{"ok": …}` or `{"err": …}`;
//! - list and tuple: an array; integers and floats: numbers (a float that is
//!   not finite: `null`); bool, char and string as themselves.
//!
//! Into the component, a record field that is absent is `none` for an
//! option, empty for a list and `false` for a bool; any other absent or
//! unknown field is an error naming its path. Fields named in `defaults`
//! (the turn context, the dream gates) start from the given object and take
//! the request's fields over it, also when the field is an option and absent.

use anyhow::{anyhow, bail, Context};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use wasmtime::component::{Type, Val};

/// Records a request may leave out or give in part, by field name.
pub type Defaults = BTreeMap<&'static str, Value>;

/// A WIT name as a JSON key: `start-line` → `start_line`.
pub fn json_key(wit_name: &str) -> String {
    wit_name.replace('-', "_")
}

/// Renders a value the component returned.
pub fn to_json(value: &Val) -> Value {
    match value {
        Val::Bool(b) => Value::Bool(*b),
        Val::S8(n) => (*n).into(),
        Val::U8(n) => (*n).into(),
        Val::S16(n) => (*n).into(),
        Val::U16(n) => (*n).into(),
        Val::S32(n) => (*n).into(),
        Val::U32(n) => (*n).into(),
        Val::S64(n) => (*n).into(),
        Val::U64(n) => (*n).into(),
        Val::Float32(x) => float(*x as f64),
        Val::Float64(x) => float(*x),
        Val::Char(c) => Value::String(c.to_string()),
        Val::String(s) => Value::String(s.clone()),
        Val::List(items) | Val::Tuple(items) | Val::FixedLengthList(items) => {
            Value::Array(items.iter().map(to_json).collect())
        }
        Val::Map(pairs) => Value::Array(
            pairs
                .iter()
                .map(|(k, v)| Value::Array(vec![to_json(k), to_json(v)]))
                .collect(),
        ),
        Val::Record(fields) => Value::Object(
            fields
                .iter()
                .map(|(name, v)| (json_key(name), to_json(v)))
                .collect(),
        ),
        Val::Variant(case, payload) => variant(case, payload.as_deref()),
        Val::Enum(case) => Value::String(case.clone()),
        Val::Option(inner) => inner.as_deref().map_or(Value::Null, to_json),
        Val::Result(Ok(v)) => single("ok", v.as_deref().map_or(Value::Null, to_json)),
        Val::Result(Err(e)) => single("err", e.as_deref().map_or(Value::Null, to_json)),
        Val::Flags(set) => Value::Array(set.iter().cloned().map(Value::String).collect()),
        Val::Resource(_) | Val::Future(_) | Val::Stream(_) | Val::ErrorContext(_) => {
            Value::String("<handle>".into())
        }
    }
}

/// A variant case as `{"kind", "value"}`: the component's `error` renders as
/// `{"kind": "not-found", "value": "…message…"}`.
pub fn variant(case: &str, payload: Option<&Val>) -> Value {
    let mut object = Map::new();
    object.insert("kind".into(), Value::String(case.into()));
    object.insert("value".into(), payload.map_or(Value::Null, to_json));
    Value::Object(object)
}

fn single(key: &str, value: Value) -> Value {
    let mut object = Map::new();
    object.insert(key.into(), value);
    Value::Object(object)
}

fn float(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

/// Builds a value of type `ty` from scenario JSON (see the module comment);
/// `at` names the place in errors.
pub fn from_json(ty: &Type, json: &Value, defaults: &Defaults, at: &str) -> anyhow::Result<Val> {
    let wrong = || anyhow!("{at}: expected {}, got {json}", type_name(ty));
    Ok(match ty {
        Type::Bool => Val::Bool(json.as_bool().ok_or_else(wrong)?),
        Type::S8 => Val::S8(int(json, at)?),
        Type::U8 => Val::U8(int(json, at)?),
        Type::S16 => Val::S16(int(json, at)?),
        Type::U16 => Val::U16(int(json, at)?),
        Type::S32 => Val::S32(int(json, at)?),
        Type::U32 => Val::U32(int(json, at)?),
        Type::S64 => Val::S64(int(json, at)?),
        Type::U64 => Val::U64(int(json, at)?),
        Type::Float32 => Val::Float32(json.as_f64().ok_or_else(wrong)? as f32),
        Type::Float64 => Val::Float64(json.as_f64().ok_or_else(wrong)?),
        Type::Char => {
            let text = json.as_str().ok_or_else(wrong)?;
            let mut chars = text.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Val::Char(c),
                _ => return Err(wrong()),
            }
        }
        Type::String => Val::String(json.as_str().ok_or_else(wrong)?.to_string()),
        Type::List(list) => {
            let items = json.as_array().ok_or_else(wrong)?;
            let element = list.ty();
            Val::List(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| from_json(&element, item, defaults, &format!("{at}[{i}]")))
                    .collect::<anyhow::Result<_>>()?,
            )
        }
        Type::Tuple(tuple) => {
            let items = json.as_array().ok_or_else(wrong)?;
            if items.len() != tuple.types().len() {
                return Err(wrong());
            }
            Val::Tuple(
                tuple
                    .types()
                    .zip(items)
                    .enumerate()
                    .map(|(i, (t, item))| from_json(&t, item, defaults, &format!("{at}[{i}]")))
                    .collect::<anyhow::Result<_>>()?,
            )
        }
        Type::Record(record) => {
            let object = json.as_object().ok_or_else(wrong)?;
            let fields: Vec<(&str, Type)> = record.fields().map(|f| (f.name, f.ty)).collect();
            Val::Record(fields_from_json(&fields, object, defaults, at)?)
        }
        Type::Variant(variant) => {
            let object = json.as_object().ok_or_else(wrong)?;
            let case = object
                .get("kind")
                .and_then(Value::as_str)
                .ok_or_else(wrong)?;
            let found = variant
                .cases()
                .find(|c| c.name == case)
                .ok_or_else(|| anyhow!("{at}: no case `{case}`"))?;
            let payload = match (&found.ty, object.get("value")) {
                (Some(t), Some(v)) => {
                    Some(Box::new(from_json(t, v, defaults, &format!("{at}.value"))?))
                }
                (Some(_), None) => bail!("{at}: case `{case}` needs a `value`"),
                (None, None | Some(Value::Null)) => None,
                (None, Some(_)) => bail!("{at}: case `{case}` has no value"),
            };
            Val::Variant(case.to_string(), payload)
        }
        Type::Enum(cases) => {
            let case = json.as_str().ok_or_else(wrong)?;
            if !cases.names().any(|n| n == case) {
                bail!(
                    "{at}: `{case}` is not one of {}",
                    cases.names().collect::<Vec<_>>().join(", ")
                );
            }
            Val::Enum(case.to_string())
        }
        Type::Option(inner) => match json {
            Value::Null => Val::Option(None),
            some => Val::Option(Some(Box::new(from_json(&inner.ty(), some, defaults, at)?))),
        },
        Type::Result(result) => {
            let object = json.as_object().ok_or_else(wrong)?;
            let (ok, value) = match (object.get("ok"), object.get("err")) {
                (Some(v), None) => (true, v),
                (None, Some(v)) => (false, v),
                _ => return Err(wrong()),
            };
            let ty = if ok { result.ok() } else { result.err() };
            let inner = ty
                .map(|t| from_json(&t, value, defaults, at).map(Box::new))
                .transpose()?;
            Val::Result(if ok { Ok(inner) } else { Err(inner) })
        }
        Type::Flags(flags) => {
            let names = json.as_array().ok_or_else(wrong)?;
            let mut set = Vec::new();
            for name in names {
                let name = name.as_str().ok_or_else(wrong)?;
                if !flags.names().any(|n| n == name) {
                    bail!("{at}: no flag `{name}`");
                }
                set.push(name.to_string());
            }
            Val::Flags(set)
        }
        _ => bail!("{at}: a {} cannot be written in a scenario", type_name(ty)),
    })
}

/// A record's fields (or a function's parameters) from a JSON object: see
/// the module comment for absent fields and `defaults`.
pub fn fields_from_json(
    fields: &[(&str, Type)],
    object: &Map<String, Value>,
    defaults: &Defaults,
    at: &str,
) -> anyhow::Result<Vec<(String, Val)>> {
    // Unknown names first: a typo also leaves its field missing.
    let known: Vec<String> = fields.iter().map(|(name, _)| json_key(name)).collect();
    if let Some(unknown) = object.keys().find(|k| !known.contains(k)) {
        bail!(
            "{at}: unknown field `{unknown}`; the fields are {}",
            known.join(", ")
        );
    }
    let mut out = Vec::new();
    for (name, ty) in fields {
        let key = json_key(name);
        let path = format!("{at}.{key}");
        let given = object.get(&key);
        let value = match (defaults.get(key.as_str()), given) {
            (Some(default), given) => {
                let merged = merge(default, given, &path)?;
                match ty {
                    Type::Option(inner) => Val::Option(Some(Box::new(from_json(
                        &inner.ty(),
                        &merged,
                        defaults,
                        &path,
                    )?))),
                    other => from_json(other, &merged, defaults, &path)?,
                }
            }
            (None, Some(given)) => from_json(ty, given, defaults, &path)?,
            (None, None) => {
                absent(ty).with_context(|| format!("{path} is missing (a {})", type_name(ty)))?
            }
        };
        out.push((name.to_string(), value));
    }
    Ok(out)
}

/// The value of a record field the request left out, where it has one.
fn absent(ty: &Type) -> anyhow::Result<Val> {
    Ok(match ty {
        Type::Option(_) => Val::Option(None),
        Type::List(_) => Val::List(Vec::new()),
        Type::Bool => Val::Bool(false),
        _ => bail!("required"),
    })
}

/// `given`'s fields over `default`'s.
fn merge(default: &Value, given: Option<&Value>, at: &str) -> anyhow::Result<Value> {
    let mut merged = default.clone();
    match given {
        None => {}
        Some(Value::Object(fields)) => {
            let target = merged.as_object_mut().expect("defaults are objects");
            for (key, value) in fields {
                target.insert(key.clone(), value.clone());
            }
        }
        Some(other) => bail!("{at}: expected an object, got {other}"),
    }
    Ok(merged)
}

fn int<T: TryFrom<i64> + TryFrom<u64>>(json: &Value, at: &str) -> anyhow::Result<T> {
    let out_of_range = || anyhow!("{at}: {json} is out of range");
    if let Some(n) = json.as_u64() {
        return T::try_from(n).map_err(|_| out_of_range());
    }
    if let Some(n) = json.as_i64() {
        return T::try_from(n).map_err(|_| out_of_range());
    }
    bail!("{at}: expected an integer, got {json}")
}

/// A type's WIT spelling, for messages.
pub fn type_name(ty: &Type) -> String {
    match describe_type(ty) {
        Value::String(name) => name,
        Value::Object(o) => o.keys().next().cloned().unwrap_or_default(),
        other => other.to_string(),
    }
}

/// A WIT type as data (`tests/conformance/calls.json`): a primitive's name,
/// or `{"list": T}`, `{"option": T}`, `{"record": [{"name", "type"}]}`,
/// `{"variant": [{"name", "type"}]}` (`type` null without a payload),
/// `{"enum": [names]}`, `{"flags": [names]}`, `{"tuple": [T]}`,
/// `{"result": {"ok", "err"}}`, `{"borrow": {}}` or `{"own": {}}`.
pub fn describe_type(ty: &Type) -> Value {
    use serde_json::json;
    let named = |name: &str, ty: Option<Type>| json!({"name": name, "type": ty.as_ref().map(describe_type)});
    match ty {
        Type::Bool => "bool".into(),
        Type::S8 => "s8".into(),
        Type::U8 => "u8".into(),
        Type::S16 => "s16".into(),
        Type::U16 => "u16".into(),
        Type::S32 => "s32".into(),
        Type::U32 => "u32".into(),
        Type::S64 => "s64".into(),
        Type::U64 => "u64".into(),
        Type::Float32 => "f32".into(),
        Type::Float64 => "f64".into(),
        Type::Char => "char".into(),
        Type::String => "string".into(),
        Type::List(l) => json!({"list": describe_type(&l.ty())}),
        Type::Option(o) => json!({"option": describe_type(&o.ty())}),
        Type::Record(r) => {
            json!({"record": r.fields().map(|f| named(f.name, Some(f.ty))).collect::<Vec<_>>()})
        }
        Type::Variant(v) => {
            json!({"variant": v.cases().map(|c| named(c.name, c.ty)).collect::<Vec<_>>()})
        }
        Type::Enum(e) => json!({"enum": e.names().collect::<Vec<_>>()}),
        Type::Flags(f) => json!({"flags": f.names().collect::<Vec<_>>()}),
        Type::Tuple(t) => {
            json!({"tuple": t.types().map(|t| describe_type(&t)).collect::<Vec<_>>()})
        }
        Type::Result(r) => json!({"result": {
            "ok": r.ok().as_ref().map(describe_type),
            "err": r.err().as_ref().map(describe_type),
        }}),
        Type::Borrow(_) => json!({"borrow": {}}),
        Type::Own(_) => json!({"own": {}}),
        Type::Map(m) => json!({"map": [describe_type(&m.key()), describe_type(&m.value())]}),
        Type::FixedLengthList(l) => json!({"list": describe_type(&l.ty()), "length": l.len()}),
        Type::Future(_) => "future".into(),
        Type::Stream(_) => "stream".into(),
        Type::ErrorContext => "error-context".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_render_by_the_one_rule() {
        let hit = Val::Record(vec![
            ("start-line".into(), Val::U32(3)),
            ("mode".into(), Val::Enum("fts-only".into())),
            ("heading".into(), Val::Option(None)),
            (
                "vector".into(),
                Val::Option(Some(Box::new(Val::Float32(0.5)))),
            ),
            ("at-ms".into(), Val::S64(-1)),
            ("flags".into(), Val::Flags(vec!["a".into()])),
            ("nan".into(), Val::Float64(f64::NAN)),
        ]);
        assert_eq!(
            to_json(&hit),
            json!({"start_line": 3, "mode": "fts-only", "heading": null, "vector": 0.5,
                   "at_ms": -1, "flags": ["a"], "nan": null})
        );
        let error = Val::Variant("not-found".into(), Some(Box::new(Val::String("x".into()))));
        assert_eq!(to_json(&error), json!({"kind": "not-found", "value": "x"}));
        assert_eq!(
            to_json(&Val::Variant("none".into(), None)),
            json!({"kind": "none", "value": null})
        );
        let ok = Val::Result(Ok(Some(Box::new(Val::Bool(true)))));
        assert_eq!(to_json(&ok), json!({"ok": true}));
        assert_eq!(to_json(&Val::Result(Err(None))), json!({"err": null}));
    }

    #[test]
    fn defaults_take_the_request_over_them() {
        let merged = merge(&json!({"a": 1, "b": 2}), Some(&json!({"b": 3})), "$").unwrap();
        assert_eq!(merged, json!({"a": 1, "b": 3}));
        assert_eq!(merge(&json!({"a": 1}), None, "$").unwrap(), json!({"a": 1}));
        assert!(merge(&json!({"a": 1}), Some(&json!(5)), "$").is_err());
    }

    #[test]
    fn integers_are_range_checked() {
        assert_eq!(int::<u8>(&json!(255), "$").unwrap(), 255);
        assert!(int::<u8>(&json!(256), "$").is_err());
        assert!(int::<u32>(&json!(-1), "$").is_err());
        assert_eq!(int::<i64>(&json!(-5), "$").unwrap(), -5);
        assert!(int::<u32>(&json!(1.5), "$").is_err());
    }
}
