//! Recall intent: does a message ask about the past? Deterministic phrase
//! matching in English, Spanish, Portuguese, Chinese, Japanese and Korean —
//! explicit past references, temporal expressions, and direct questions about
//! earlier decisions or conversations. Future-facing requests ("remember to
//! …", "remind me …") are not recall, whatever else they contain.

/// Phrases that point at the past. Matched on the lowercased message; Latin
/// phrases on word boundaries, CJK ones as substrings.
const PAST: &[&str] = &[
    // English
    "remember when",
    "do you remember",
    "do you recall",
    "did we",
    "did i",
    "did you",
    "what did",
    "last time",
    "earlier",
    "previously",
    "we discussed",
    "we talked about",
    "you said",
    "you told me",
    "i told you",
    "i mentioned",
    "we decided",
    "what was the decision",
    "yesterday",
    "last week",
    "last month",
    "last year",
    "ago",
    "the other day",
    // Spanish
    "recuerdas",
    "te acuerdas",
    "la última vez",
    "la ultima vez",
    "ayer",
    "la semana pasada",
    "el mes pasado",
    "hace unos días",
    "hace días",
    "qué decidimos",
    "que decidimos",
    "dijiste",
    "hablamos de",
    "hablamos sobre",
    "anteriormente",
    "antes dijiste",
    // Portuguese
    "você lembra",
    "voce lembra",
    "se lembra",
    "lembra quando",
    "da última vez",
    "da ultima vez",
    "ontem",
    "semana passada",
    "mês passado",
    "mes passado",
    "há dias",
    "o que decidimos",
    "você disse",
    "voce disse",
    "falamos sobre",
    "conversamos sobre",
    // Chinese
    "记得吗",
    "还记得",
    "你记得",
    "上次",
    "之前",
    "昨天",
    "上周",
    "上个月",
    "我们讨论过",
    "我们聊过",
    "你说过",
    "我说过",
    "我们决定",
    "以前",
    "前几天",
    // Japanese
    "覚えてる",
    "覚えています",
    "前回",
    "以前",
    "昨日",
    "先週",
    "先月",
    "話した",
    "決めた",
    "言った",
    "この前",
    // Korean
    "기억나",
    "기억해",
    "기억하",
    "지난번",
    "예전에",
    "어제",
    "지난주",
    "지난달",
    "얘기했",
    "이야기했",
    "결정했",
    "말했",
];

/// Requests about the future: never recall.
const FUTURE: &[&str] = &[
    // English
    "remember to",
    "don't forget to",
    "do not forget to",
    "remind me",
    "next time",
    "from now on",
    // Spanish
    "recuerda que debo",
    "recuérdame",
    "recuerdame",
    "no olvides",
    "la próxima vez",
    "a partir de ahora",
    // Portuguese
    "lembre-me",
    "me lembre",
    "não esqueça",
    "nao esqueca",
    "da próxima vez",
    "a partir de agora",
    // Chinese
    "记得要",
    "提醒我",
    "别忘了",
    "下次",
    "以后",
    // Japanese
    "忘れずに",
    "リマインド",
    "次回",
    "今度",
    // Korean
    "잊지 말고",
    "잊지 마",
    "알려줘",
    "다음에",
    "다음번",
];

/// Whether the message shows recall intent.
pub fn has_recall_intent(message: &str) -> bool {
    let lower = message.to_lowercase();
    if FUTURE.iter().any(|p| contains_phrase(&lower, p)) {
        return false;
    }
    PAST.iter().any(|p| contains_phrase(&lower, p))
}

/// Latin-script phrases must sit on word boundaries ("ago" is not in
/// "agora"); CJK phrases are matched anywhere.
fn contains_phrase(text: &str, phrase: &str) -> bool {
    if !phrase.is_ascii() && !phrase.chars().any(|c| c.is_ascii_alphabetic()) {
        return text.contains(phrase);
    }
    let mut start = 0;
    while let Some(found) = text[start..].find(phrase) {
        let at = start + found;
        let end = at + phrase.len();
        let before = text[..at].chars().next_back();
        let after = text[end..].chars().next();
        if !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric) {
            return true;
        }
        start = at + phrase.chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// When lane 2 runs, per `plugins.entries.active-memory.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EscalationMode {
    /// Only with recall intent and no strong lane-1 match (the default).
    Escalate,
    Always,
    Off,
}

/// The escalation decision and its reason.
pub fn decide(
    mode: EscalationMode,
    recall_intent: bool,
    strong_lane1: bool,
) -> (bool, &'static str) {
    match mode {
        EscalationMode::Off => (false, "escalation is off"),
        EscalationMode::Always => (true, "escalation is always on"),
        EscalationMode::Escalate => match (recall_intent, strong_lane1) {
            (false, _) => (false, "no recall intent"),
            (true, true) => (
                false,
                "recall intent, but lane 1 already found a strong match",
            ),
            (true, false) => (true, "recall intent and no strong lane-1 match"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_references_in_every_language() {
        for message in [
            "What did we decide about the gateway?",
            "Do you remember the server name?",
            "We talked about this last week",
            "¿Recuerdas qué decidimos sobre el servidor?",
            "¿Qué dijiste ayer sobre la factura?",
            "Você lembra o que decidimos ontem?",
            "O que falamos sobre o deploy semana passada?",
            "你还记得我们上次讨论的服务器吗？",
            "我们之前决定用哪个区域？",
            "前回決めたサーバー名は何でしたか？",
            "昨日話したことを覚えてる？",
            "지난번에 결정했던 서버 이름이 뭐였지?",
            "어제 얘기했던 거 기억나?",
        ] {
            assert!(has_recall_intent(message), "{message}");
        }
    }

    #[test]
    fn future_facing_requests_are_not_recall() {
        for message in [
            "Remember to mention the changelog when we release.",
            "Remind me on Friday to renew the certificate",
            "Recuérdame mañana llamar a Dana",
            "No olvides revisar el servidor",
            "Lembre-me de pagar a fatura amanhã",
            "提醒我明天检查服务器",
            "下次部署时记得要更新日志",
            "忘れずに明日サーバーを確認して",
            "다음에 배포할 때 잊지 말고 알려줘",
        ] {
            assert!(!has_recall_intent(message), "{message}");
        }
    }

    #[test]
    fn plain_requests_are_not_recall() {
        for message in [
            "Write a haiku about autumn",
            "Agora vamos começar",
            "Set up the gateway",
            "今日はいい天気",
        ] {
            assert!(!has_recall_intent(message), "{message}");
        }
    }

    #[test]
    fn the_decision_matrix() {
        use EscalationMode::*;
        assert!(decide(Escalate, true, false).0);
        assert!(!decide(Escalate, true, true).0);
        assert!(!decide(Escalate, false, false).0);
        assert!(decide(Always, false, true).0);
        assert!(!decide(Off, true, false).0);
    }
}
