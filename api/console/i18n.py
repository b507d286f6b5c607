"""The console's languages: English and Japanese, chosen from ``Accept-Language``; a message
missing in Japanese falls back to English. A topic's display name is its ``name_ja`` / ``name_en``."""

from __future__ import annotations

from typing import Any

LANGUAGES = ("en", "ja")

MESSAGES: dict[str, dict[str, str]] = {
    "en": {
        "app": "Tocsin console",
        "skip": "Skip to content",
        "incidents": "Incidents",
        "topics": "Topics",
        "account": "Account",
        "signout": "Sign out",
        "signin": "Sign in",
        "organization": "Organization ID",
        "email": "E-mail",
        "password": "Password",
        "continue": "Continue",
        "with_password": "Sign in with a password",
        "with_link": "E-mail me a sign-in link",
        "send_link": "Send the link",
        "forgot": "Forgot the password?",
        "send_reset": "Send a reset link",
        "mail_sent": "If an account has this address, an e-mail is on its way. Open its link in this browser.",
        "link_title": "Sign in with the e-mailed link",
        "second_title": "Second step",
        "totp_code": "Code from the authenticator app",
        "recovery_code": "Recovery code",
        "use_recovery": "Use a recovery code",
        "use_key": "Use a security key or passkey",
        "key_failed": "The security key did not answer. Try again or use another method.",
        "enrol_title": "Set up a second factor",
        "enrol_intro": "Your organization asks for a second factor. Set one up to finish signing in.",
        "totp_setup": "Authenticator app (TOTP)",
        "totp_scan": "Scan the code with an authenticator app, or type the secret, then enter the code it shows.",
        "secret": "Secret",
        "confirm": "Confirm",
        "key_setup": "Security key or passkey",
        "add_key": "Add a security key",
        "key_name": "Name of the key",
        "recovery_title": "Recovery codes",
        "recovery_intro": "Keep these codes somewhere safe. Each works once, and they are shown only now.",
        "choose_password": "Choose a password",
        "new_password": "New password (12 characters or more)",
        "save_password": "Save the password",
        "password_saved": "The password is saved. Sign in with it.",
        "filter": "Filter",
        "mode": "Mode",
        "all": "All",
        "status": "Status",
        "title": "Title",
        "topic": "Topic",
        "created": "Created",
        "open_first": "Open incidents first, newest first.",
        "no_incidents": "No incidents.",
        "updated": "Updated",
        "exercise": "Exercise",
        "test": "Test",
        "actual": "Actual",
        "incident": "Incident",
        "timeline": "Timeline",
        "acknowledge": "Acknowledge",
        "resolve": "Resolve",
        "reopen": "Reopen",
        "cannot_act": "You can read this incident but not change it.",
        "event": "Event",
        "trace": "Event trace",
        "step": "Step",
        "no_trace": "No trace for this event yet.",
        "partition_key": "Partition key",
        "control_state": "Control state",
        "show": "Show",
        "episode_open": "Episode open",
        "peak": "Peak",
        "last_values": "Last values",
        "stable_count": "Stable count",
        "set_members": "Set members",
        "last_decision": "Last decision",
        "auto_resolve_at": "Automatic release at",
        "policy_type": "Policy",
        "yes": "yes",
        "no": "no",
        "error": "Something went wrong",
        "back": "Back to the incidents",
        "signed_in_as": "Signed in as",
        "keys": "Security keys",
        "no_keys": "No security key yet.",
        "totp_on": "An authenticator app is set up.",
        "totp_off": "No authenticator app yet.",
        "set_up": "Set up",
        "members": "Members",
        "acknowledged": "Acknowledged",
        "resolved": "Resolved",
        "OPEN": "Open",
        "ACKNOWLEDGED": "Acknowledged",
        "RESOLVED": "Resolved",
        "js_needed": "This step needs JavaScript.",
    },
    "ja": {
        "app": "Tocsin コンソール",
        "skip": "本文へ移動",
        "incidents": "インシデント",
        "topics": "トピック",
        "account": "アカウント",
        "signout": "サインアウト",
        "signin": "サインイン",
        "organization": "組織 ID",
        "email": "メールアドレス",
        "password": "パスワード",
        "continue": "次へ",
        "with_password": "パスワードでサインイン",
        "with_link": "サインイン用リンクをメールで受け取る",
        "send_link": "リンクを送信",
        "forgot": "パスワードをお忘れの場合",
        "send_reset": "再設定用リンクを送信",
        "mail_sent": "このアドレスのアカウントがあれば、メールを送信しました。このブラウザでリンクを開いてください。",
        "link_title": "メールのリンクでサインイン",
        "second_title": "2 段階目の認証",
        "totp_code": "認証アプリのコード",
        "recovery_code": "リカバリーコード",
        "use_recovery": "リカバリーコードを使う",
        "use_key": "セキュリティキーまたはパスキーを使う",
        "key_failed": "セキュリティキーが応答しませんでした。もう一度試すか、別の方法を使ってください。",
        "enrol_title": "2 要素目の設定",
        "enrol_intro": "組織の方針で 2 要素目が必要です。設定するとサインインが完了します。",
        "totp_setup": "認証アプリ (TOTP)",
        "totp_scan": "認証アプリでコードを読み取るかシークレットを入力し、表示されたコードを入力してください。",
        "secret": "シークレット",
        "confirm": "確認",
        "key_setup": "セキュリティキーまたはパスキー",
        "add_key": "セキュリティキーを追加",
        "key_name": "キーの名前",
        "recovery_title": "リカバリーコード",
        "recovery_intro": "安全な場所に保管してください。各コードは 1 回だけ使え、表示されるのは今だけです。",
        "choose_password": "パスワードの設定",
        "new_password": "新しいパスワード (12 文字以上)",
        "save_password": "パスワードを保存",
        "password_saved": "パスワードを保存しました。サインインしてください。",
        "filter": "絞り込み",
        "mode": "モード",
        "all": "すべて",
        "status": "状態",
        "title": "件名",
        "topic": "トピック",
        "created": "作成日時",
        "open_first": "未対応のインシデントを先に、新しい順に表示します。",
        "no_incidents": "インシデントはありません。",
        "updated": "更新",
        "exercise": "訓練",
        "test": "テスト",
        "actual": "実災害",
        "incident": "インシデント",
        "timeline": "タイムライン",
        "acknowledge": "確認済みにする",
        "resolve": "解決する",
        "reopen": "再オープン",
        "cannot_act": "このインシデントは閲覧のみ可能です。",
        "event": "イベント",
        "trace": "イベントの追跡",
        "step": "段階",
        "no_trace": "このイベントの追跡記録はまだありません。",
        "partition_key": "パーティションキー",
        "control_state": "制御状態",
        "show": "表示",
        "episode_open": "エピソード継続中",
        "peak": "ピーク",
        "last_values": "直近の値",
        "stable_count": "安定カウント",
        "set_members": "セットの要素",
        "last_decision": "直近の判定",
        "auto_resolve_at": "自動解除の時刻",
        "policy_type": "ポリシー",
        "yes": "はい",
        "no": "いいえ",
        "error": "エラーが発生しました",
        "back": "インシデント一覧へ戻る",
        "signed_in_as": "サインイン中",
        "keys": "セキュリティキー",
        "no_keys": "セキュリティキーはまだありません。",
        "totp_on": "認証アプリが設定されています。",
        "totp_off": "認証アプリはまだ設定されていません。",
        "set_up": "設定する",
        "members": "メンバー",
        "acknowledged": "確認日時",
        "resolved": "解決日時",
        "OPEN": "未対応",
        "ACKNOWLEDGED": "確認済み",
        "RESOLVED": "解決済み",
        "js_needed": "この手順には JavaScript が必要です。",
    },
}


def language(accept_language: str) -> str:
    """The first of the console's languages the header prefers (q-values honoured), else English."""
    best, best_q = "en", -1.0
    for position, part in enumerate(accept_language.split(",")[:20]):
        tag, _, params = part.strip().partition(";")
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                q = 0.0
        primary = tag.strip().lower().split("-")[0]
        score = q - position * 1e-6  # the earlier of equal weights
        if primary in LANGUAGES and q > 0 and score > best_q:
            best, best_q = primary, score
    return best


def translator(lang: str) -> Any:
    table = MESSAGES.get(lang, MESSAGES["en"])

    def t(key: str) -> str:
        return table.get(key) or MESSAGES["en"].get(key, key)

    return t


def display_name(spec: dict[str, Any], lang: str, fallback: str) -> str:
    """A topic's (or field's) name in the language: ``name_ja`` / ``name_en``, the other if missing."""
    other = "en" if lang == "ja" else "ja"
    return str(spec.get(f"name_{lang}") or spec.get(f"name_{other}") or fallback)
