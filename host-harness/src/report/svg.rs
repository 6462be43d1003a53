//! The review page's plots as inline SVG: stacked columns over time and
//! horizontal bars. Pure functions from numbers to markup; every label is
//! escaped, colours come from the page's CSS classes, and each bar carries
//! a `<title>` so hovering shows its figures without any script.

use super::html::esc;
use crate::clock::parse_now;
use crate::cron::format_utc_minute;

/// One stacked series: its name and the CSS class that colours it.
#[derive(Debug, Clone, Copy)]
pub struct Series<'a> {
    pub name: &'a str,
    pub class: &'a str,
}

/// One column: its label and a value per series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub label: String,
    pub values: Vec<u32>,
}

const DAY_MS: i64 = 86_400_000;
/// Up to this many days, one column per day; then per month; then per year.
const MAX_DAY_COLUMNS: i64 = 62;
const MAX_MONTH_COLUMNS: i64 = 120;

/// How wide one column of a time axis is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Granularity {
    Day,
    Month,
    Year,
}

impl Granularity {
    /// The column key of a day (days since the Unix epoch): the day, the
    /// month count or the year.
    fn key(self, day: i64) -> i64 {
        let date = &format_utc_minute(day * DAY_MS)[..10];
        let year = date[..4].parse::<i64>().unwrap_or(0);
        let month = date[5..7].parse::<i64>().unwrap_or(1);
        match self {
            Granularity::Day => day,
            Granularity::Month => year * 12 + month - 1,
            Granularity::Year => year,
        }
    }

    fn label(self, key: i64) -> String {
        match self {
            Granularity::Day => format_utc_minute(key * DAY_MS)[..10].to_string(),
            Granularity::Month => {
                format!("{:04}-{:02}", key.div_euclid(12), key.rem_euclid(12) + 1)
            }
            Granularity::Year => format!("{key:04}"),
        }
    }
}

/// Columns over time from per-day values (`YYYY-MM-DD`, any order): one per
/// day, month or year, whichever keeps the axis readable, with the empty
/// ones in between so the axis is even.
pub fn time_columns(days: &[(String, Vec<u32>)], series: usize) -> Vec<Column> {
    let mut dated: Vec<(i64, &Vec<u32>)> = days
        .iter()
        .filter_map(|(day, values)| Some((parse_now(day).ok()? / DAY_MS, values)))
        .collect();
    if dated.is_empty() {
        return Vec::new();
    }
    dated.sort_by_key(|(d, _)| *d);
    let (first, last) = (dated[0].0, dated[dated.len() - 1].0);
    let months = |d| Granularity::Month.key(d);
    let granularity = if last - first < MAX_DAY_COLUMNS {
        Granularity::Day
    } else if months(last) - months(first) < MAX_MONTH_COLUMNS {
        Granularity::Month
    } else {
        Granularity::Year
    };
    let (lo, hi) = (granularity.key(first), granularity.key(last));
    let mut columns: Vec<Column> = (lo..=hi)
        .map(|k| Column {
            label: granularity.label(k),
            values: vec![0; series],
        })
        .collect();
    for (d, values) in dated {
        let column = &mut columns[(granularity.key(d) - lo) as usize];
        for (sum, v) in column.values.iter_mut().zip(values) {
            *sum += v;
        }
    }
    columns
}

/// A round axis maximum at or above `max`: 1, 2 or 5 times a power of ten.
fn nice_max(max: u32) -> u32 {
    let mut step = 1u32;
    loop {
        for m in [1, 2, 5] {
            if let Some(v) = step.checked_mul(m) {
                if v >= max {
                    return v;
                }
            }
        }
        match step.checked_mul(10) {
            Some(next) => step = next,
            None => return u32::MAX,
        }
    }
}

/// Stacked columns with a value axis, a label axis and a legend.
pub fn stacked_columns(title: &str, series: &[Series<'_>], columns: &[Column]) -> String {
    const W: f64 = 960.0;
    const H: f64 = 260.0;
    const LEFT: f64 = 48.0;
    const RIGHT: f64 = 12.0;
    const TOP: f64 = 28.0;
    const BOTTOM: f64 = 56.0;
    let plot_w = W - LEFT - RIGHT;
    let plot_h = H - TOP - BOTTOM;
    let top = nice_max(
        columns
            .iter()
            .map(|c| c.values.iter().sum::<u32>())
            .max()
            .unwrap_or(0)
            .max(1),
    );
    let mut svg = format!(
        "<svg class=\"plot\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\" aria-label=\"{}\" xmlns=\"http://www.w3.org/2000/svg\">",
        esc(title)
    );
    // Legend along the top.
    let mut x = LEFT;
    for s in series {
        svg.push_str(&format!(
            "<rect x=\"{x}\" y=\"8\" width=\"12\" height=\"12\" class=\"{}\"/><text x=\"{}\" y=\"18\" class=\"legend\">{}</text>",
            esc(s.class),
            x + 16.0,
            esc(s.name)
        ));
        x += 24.0 + 8.0 * s.name.chars().count() as f64;
    }
    // Value axis: 0, half, top.
    for tick in [0, top / 2, top] {
        let y = TOP + plot_h - plot_h * tick as f64 / top as f64;
        svg.push_str(&format!(
            "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" class=\"grid\"/><text x=\"{}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"end\">{tick}</text>",
            W - RIGHT,
            LEFT - 6.0,
            y + 4.0
        ));
    }
    let n = columns.len().max(1) as f64;
    let slot = plot_w / n;
    let bar = (slot * 0.8).max(1.0);
    let label_every = (columns.len() / 16).max(1);
    for (i, column) in columns.iter().enumerate() {
        let x = LEFT + slot * i as f64 + (slot - bar) / 2.0;
        let mut y = TOP + plot_h;
        let total: u32 = column.values.iter().sum();
        for (value, s) in column.values.iter().zip(series) {
            if *value == 0 {
                continue;
            }
            let h = plot_h * *value as f64 / top as f64;
            y -= h;
            svg.push_str(&format!(
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{bar:.1}\" height=\"{h:.1}\" class=\"{}\"><title>{} · {}: {value} of {total}</title></rect>",
                esc(s.class),
                esc(&column.label),
                esc(s.name)
            ));
        }
        if i % label_every == 0 {
            let lx = x + bar / 2.0;
            let ly = TOP + plot_h + 14.0;
            svg.push_str(&format!(
                "<text x=\"{lx:.1}\" y=\"{ly:.1}\" class=\"tick\" text-anchor=\"end\" transform=\"rotate(-35 {lx:.1} {ly:.1})\">{}</text>",
                esc(&column.label)
            ));
        }
    }
    svg.push_str("</svg>");
    svg
}

/// One horizontal bar: its label, value and CSS class.
#[derive(Debug, Clone)]
pub struct Bar {
    pub label: String,
    pub value: u32,
    pub class: &'static str,
}

/// Horizontal bars, longest first as given, labels on the left.
pub fn horizontal_bars(title: &str, bars: &[Bar]) -> String {
    const W: f64 = 960.0;
    const ROW: f64 = 22.0;
    const LABEL_W: f64 = 360.0;
    const LABEL_CHARS: usize = 52;
    let h = ROW * bars.len().max(1) as f64 + 8.0;
    let top = nice_max(bars.iter().map(|b| b.value).max().unwrap_or(0).max(1));
    let plot_w = W - LABEL_W - 60.0;
    let mut svg = format!(
        "<svg class=\"plot\" viewBox=\"0 0 {W} {h}\" width=\"{W}\" height=\"{h}\" role=\"img\" aria-label=\"{}\" xmlns=\"http://www.w3.org/2000/svg\">",
        esc(title)
    );
    for (i, b) in bars.iter().enumerate() {
        let y = 4.0 + ROW * i as f64;
        let w = (plot_w * b.value as f64 / top as f64).max(1.0);
        let label: String = if b.label.chars().count() > LABEL_CHARS {
            let mut cut: String = b.label.chars().take(LABEL_CHARS - 1).collect();
            cut.push('…');
            cut
        } else {
            b.label.clone()
        };
        svg.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"end\">{}</text><rect x=\"{LABEL_W}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{:.1}\" class=\"{}\"><title>{}: {}</title></rect><text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\">{}</text>",
            LABEL_W - 8.0,
            y + 15.0,
            esc(&label),
            y + 3.0,
            ROW - 6.0,
            esc(b.class),
            esc(&b.label),
            b.value,
            LABEL_W + w + 6.0,
            y + 15.0,
            b.value
        ));
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(d: &str, v: &[u32]) -> (String, Vec<u32>) {
        (d.to_string(), v.to_vec())
    }

    #[test]
    fn days_become_an_even_axis() {
        let columns = time_columns(&[day("2026-12-03", &[1, 2]), day("2026-12-01", &[3, 0])], 2);
        let labels: Vec<&str> = columns.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, vec!["2026-12-01", "2026-12-02", "2026-12-03"]);
        assert_eq!(columns[1].values, vec![0, 0]);
        assert_eq!(columns[2].values, vec![1, 2]);
    }

    #[test]
    fn long_spans_are_grouped_by_month_then_year() {
        let months = time_columns(
            &[
                day("2026-01-31", &[1]),
                day("2026-04-01", &[2]),
                day("2026-04-20", &[3]),
            ],
            1,
        );
        let labels: Vec<&str> = months.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, vec!["2026-01", "2026-02", "2026-03", "2026-04"]);
        assert_eq!(months[3].values, vec![5]);
        let years = time_columns(&[day("2001-05-01", &[1]), day("2026-03-01", &[1])], 1);
        assert_eq!(years.len(), 26);
        assert_eq!(years[0].label, "2001");
    }

    #[test]
    fn bad_days_are_left_out() {
        assert!(time_columns(&[day("not a day", &[1])], 1).is_empty());
    }

    #[test]
    fn axis_maxima_are_round() {
        assert_eq!(
            [0, 1, 3, 7, 11, 250, 999].map(nice_max),
            [1, 1, 5, 10, 20, 500, 1000]
        );
        assert_eq!(nice_max(u32::MAX), u32::MAX);
    }

    #[test]
    fn labels_are_escaped() {
        let svg = stacked_columns(
            "<t>",
            &[Series {
                name: "<script>",
                class: "owner",
            }],
            &[Column {
                label: "\"><script>".into(),
                values: vec![3],
            }],
        );
        assert!(!svg.contains("<script>") && !svg.contains("<t>"), "{svg}");
        let svg = horizontal_bars(
            "x",
            &[Bar {
                label: "<img src=x onerror=alert(1)>".into(),
                value: 2,
                class: "untrusted",
            }],
        );
        assert!(!svg.contains("<img"), "{svg}");
    }
}
