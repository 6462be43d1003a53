//! What a step expects of a result: a subset of it, with operators. The
//! matching rule is the README's ("Expectations"); the Node runner's
//! `expect.mjs` is the same rule.

use serde_json::Value;

/// Checks that `actual` satisfies `expected`: objects match on the keys they
/// name; arrays element by element with equal length; scalars by equality
/// (numbers within 1e-6); and the operators `$len`, `$min_len`, `$max_len`,
/// `$contains`, `$not_contains`, `$substr`, `$not_substr`, `$gt`, `$gte`,
/// `$lt`, `$lte`, `$absent_or_null`.
pub fn check(expected: &Value, actual: &Value, at: &str) -> Result<(), String> {
    if let Value::Object(map) = expected {
        if map.keys().any(|k| k.starts_with('$')) {
            for (op, arg) in map {
                check_operator(op, arg, actual, at)?;
            }
            return Ok(());
        }
        let Value::Object(actual_map) = actual else {
            return Err(format!("{at}: expected an object, got {actual}"));
        };
        for (key, value) in map {
            let child = actual_map.get(key).unwrap_or(&Value::Null);
            check(value, child, &format!("{at}.{key}"))?;
        }
        return Ok(());
    }
    match (expected, actual) {
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return Err(format!(
                    "{at}: expected {} elements, got {}: {actual}",
                    e.len(),
                    a.len()
                ));
            }
            for (i, (x, y)) in e.iter().zip(a).enumerate() {
                check(x, y, &format!("{at}[{i}]"))?;
            }
            Ok(())
        }
        (Value::Number(e), Value::Number(a)) => {
            let (e, a) = (
                e.as_f64().unwrap_or(f64::NAN),
                a.as_f64().unwrap_or(f64::NAN),
            );
            if (e - a).abs() <= 1e-6 {
                Ok(())
            } else {
                Err(format!("{at}: expected {e}, got {a}"))
            }
        }
        _ if expected == actual => Ok(()),
        _ => Err(format!("{at}: expected {expected}, got {actual}")),
    }
}

fn check_operator(op: &str, arg: &Value, actual: &Value, at: &str) -> Result<(), String> {
    let number = |v: &Value| {
        v.as_f64()
            .ok_or_else(|| format!("{at}: expected a number, got {v}"))
    };
    let array = |v: &Value| {
        v.as_array()
            .cloned()
            .ok_or_else(|| format!("{at}: expected an array, got {v}"))
    };
    let fail = |what: String| Err(format!("{at}: {what}"));
    match op {
        "$len" | "$min_len" | "$max_len" => {
            let n = match actual {
                Value::String(s) => s.chars().count(),
                other => array(other)?.len(),
            } as f64;
            let want = number(arg)?;
            let ok = match op {
                "$len" => n == want,
                "$min_len" => n >= want,
                _ => n <= want,
            };
            if ok {
                Ok(())
            } else {
                fail(format!("{op} {want}, got length {n}: {actual}"))
            }
        }
        "$contains" | "$not_contains" => {
            let items = array(actual)?;
            for wanted in array(arg)? {
                let present = items.iter().any(|item| check(&wanted, item, at).is_ok());
                if present != (op == "$contains") {
                    return fail(format!("{op} {wanted} failed in {actual}"));
                }
            }
            Ok(())
        }
        "$substr" | "$not_substr" => {
            let needle = arg.as_str().ok_or("$substr needs a string")?;
            let hay = actual
                .as_str()
                .ok_or_else(|| format!("{at}: expected a string, got {actual}"))?;
            if hay.contains(needle) == (op == "$substr") {
                Ok(())
            } else {
                fail(format!("{op} {needle:?} failed in {hay:?}"))
            }
        }
        "$gt" | "$gte" | "$lt" | "$lte" => {
            let (a, b) = (number(actual)?, number(arg)?);
            let ok = match op {
                "$gt" => a > b,
                "$gte" => a >= b,
                "$lt" => a < b,
                _ => a <= b,
            };
            if ok {
                Ok(())
            } else {
                fail(format!("expected {op} {b}, got {a}"))
            }
        }
        "$absent_or_null" => {
            if actual.is_null() {
                Ok(())
            } else {
                fail(format!("expected null, got {actual}"))
            }
        }
        other => fail(format!("unknown operator {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn subset_matching_and_operators() {
        let actual = json!({"hits": [{"path": "a", "score": 0.5}, {"path": "b", "score": 0.2}], "mode": "fts-only"});
        assert!(check(&json!({"mode": "fts-only"}), &actual, "$").is_ok());
        assert!(check(&json!({"hits": {"$len": 2}}), &actual, "$").is_ok());
        assert!(check(
            &json!({"hits": {"$contains": [{"path": "b"}]}}),
            &actual,
            "$"
        )
        .is_ok());
        assert!(check(
            &json!({"hits": {"$not_contains": [{"path": "c"}]}}),
            &actual,
            "$"
        )
        .is_ok());
        assert!(check(
            &json!({"hits": [{"path": "a"}, {"score": {"$lt": 0.3}}]}),
            &actual,
            "$"
        )
        .is_ok());
        assert!(check(&json!({"hits": [{"path": "a"}]}), &actual, "$").is_err());
        assert!(check(&json!({"mode": "hybrid"}), &actual, "$").is_err());
        assert!(check(&json!({"missing": {"$absent_or_null": true}}), &actual, "$").is_ok());
        assert!(check(&json!({"mode": {"$substr": "fts"}}), &actual, "$").is_ok());
    }
}
