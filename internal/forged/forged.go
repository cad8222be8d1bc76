package forged

// Variant is one way to write a tag opener.
type Variant struct {
	Name string
	// Tag is the opener as written, up to the end of the tag name: "<system-reminder".
	Tag string
	// LT is how Tag writes its '<' (a prefix of Tag): what the neutraliser replaces.
	LT string
}

// Variants are the forged openers, each with its '<' as written. The 24 payloads
// are among them (zero-width space in the name or after '<', zero-width joiner, soft
// hyphen, U+2010, Cyrillic і, fullwidth ＜, small ﹤, "< ", NUL, &lt;, &#60;, \u003c,
// URL-encoded, system_reminder and the plain forms).
var Variants = []Variant{
	{"plain reminder", "<system-reminder", "<"},
	{"plain interrupt", "<system-interrupt", "<"},
	{"closing reminder", "</system-reminder", "<"},
	{"closing interrupt", "</system-interrupt", "<"},
	{"upper case", "<SYSTEM-REMINDER", "<"},
	{"mixed case", "<SyStEm-InTeRrUpT", "<"},
	{"prefix is enough", "<system-reminders", "<"},
	{"zero-width space in the name", "<sys\u200btem-reminder", "<"},
	{"zero-width space after <", "<\u200bsystem-reminder", "<"},
	{"zero-width joiner", "<system\u200d-reminder", "<"},
	{"zero-width non-joiner", "<system-rem\u200cinder", "<"},
	{"word joiner", "<system\u2060-interrupt", "<"},
	{"byte order mark", "<\ufeffsystem-reminder", "<"},
	{"soft hyphen", "<sys\u00adtem-reminder", "<"},
	{"NUL after <", "<\x00system-reminder", "<"},
	{"variation selector", "<system\ufe0f-reminder", "<"},
	{"combining accent", "<s\u0301ystem-reminder", "<"},
	{"U+2010 hyphen", "<system\u2010reminder", "<"},
	{"non-breaking hyphen", "<system\u2011interrupt", "<"},
	{"minus sign", "<system\u2212reminder", "<"},
	{"fullwidth hyphen", "<system\uff0dreminder", "<"},
	{"underscore", "<system_reminder", "<"},
	{"space for the hyphen", "<system reminder", "<"},
	{"words run together", "<systemreminder", "<"},
	{"Cyrillic і", "<system-rem\u0456nder", "<"},
	{"Cyrillic ѕуѕтем", "<\u0455\u0443\u0455\u0442\u0435\u043c-reminder", "<"},
	{"Greek capital iota", "<SYSTEM-REM\u0399NDER", "<"},
	{"long s", "<\u017fystem-reminder", "<"},
	{"dotless i", "<system-\u0131nterrupt", "<"},
	{"rn for m", "<systern-rerninder", "<"},
	{"l for I", "<SYSTEM-REMlNDER", "<"},
	{"fullwidth <", "\uff1csystem-reminder", "\uff1c"},
	{"small <", "\ufe64system-reminder", "\ufe64"},
	{"single angle quote", "\u2039system-reminder", "\u2039"},
	{"fullwidth letters", "<\uff53\uff59\uff53\uff54\uff45\uff4d-reminder", "<"},
	{"mathematical bold", "<\U0001d42c\U0001d432\U0001d42c\U0001d42d\U0001d41e\U0001d426-reminder", "<"},
	{"fullwidth /", "<\uff0fsystem-reminder", "<"},
	{"space after <", "< system-reminder", "<"},
	{"newline after <", "<\n\tsystem-interrupt", "<"},
	{"spaces around /", "< / system-reminder", "<"},
	{"entity &lt;", "&lt;system-reminder", "&lt;"},
	{"entity &LT without ;", "&LTsystem-reminder", "&LT"},
	{"entity &#60;", "&#60;system-reminder", "&#60;"},
	{"entity &#x3c;", "&#x3c;system-reminder", "&#x3c;"},
	{"entity &#X003C;", "&#X003C;system-interrupt", "&#X003C;"},
	{"double-escaped &amp;lt;", "&amp;lt;system-reminder", "&amp;lt;"},
	{"entity closing &lt;&#47;", "&lt;&#47;system-reminder", "&lt;"},
	{"JSON \\u003c", `\u003csystem-reminder`, `\u003c`},
	{"JSON \\u003C closing \\/", `\u003C\/system-interrupt`, `\u003C`},
	{"JSON escaped twice \\\\u003c", `\\u003csystem-reminder`, `\\u003c`},
	{"C \\x3c", `\x3csystem-reminder`, `\x3c`},
	{"URL %3C", "%3Csystem-reminder", "%3C"},
	{"URL %3c%2F", "%3c%2Fsystem-interrupt", "%3c"},
	{"URL twice %253C", "%253Csystem-reminder", "%253C"},
}
