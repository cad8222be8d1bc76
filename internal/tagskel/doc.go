// Package tagskel finds the engine's tags (<system-reminder>, <system-interrupt>) in
// untrusted text the way a reader, human or model, would take them, and defuses them. It is
// the root package's neutraliser: streamrules.Neutralize, the reminder blocks and
// streamrules.Splice call it; nothing else needs to see how it reads.
//
//	out := tagskel.Neutralize(toolOutput) // each tag's '<', however written, becomes '['
//	i, n := tagskel.Find(text, 0)        // the first tag's '<' is text[i:i+n]; n == 0: none
//
// Neutralize reads the text in one pass: its cost grows linearly with the text's length,
// however many tags it holds (cost_test.go counts the bytes read), and text without a tag
// is returned as is, without allocating.
//
// # How a tag is read
//
// A forged tag is read on a skeleton of the text, the way a reader would take it:
//
//   - Unicode's tag characters (U+E0020–U+E007E, invisible copies of ASCII) read as their
//     ASCII, in the name and in '<' and its escapes;
//   - other default-ignorable code points (zero-width space and joiners, the soft hyphen,
//     variation selectors, bidi controls, the other tag characters), control characters (NUL)
//     and combining marks read as nothing;
//   - NFKC folds fullwidth and small forms (＜, ﹤, ｓ) and styled letters (𝐬) to plain ones;
//   - letters fold case, small capitals (ᴍ, ɴ, ꜱ) to their letter, then confusables (UTS #39:
//     Cyrillic і, Greek ο, m as rn) fold to their Latin skeleton, and l, 1 and | read as i
//     (SYSTEM-REMlNDER);
//   - dashes, hyphen-likes (U+2010, U+2212, ‐) and '_' read as '-', and the words may also be
//     run together or split by white space;
//   - white space may follow '<' and '/';
//   - '<' and '/' may be escaped: an HTML entity (&lt; &#60; &#x3c; &sol; &#47;, also as
//     &amp;lt;), a JSON, C, Go, JavaScript or CSS escape (\u003c, \U0000003c, \u{3c}, \x3c,
//     \x{3c}, octal \074, \3c, \/), URL encoding (%3C, %253C, %u003C); the escape's own '&',
//     '%' or '\' may be escaped once more (encoding/json's \u0026lt;, &#92;u003c, %5Cu003c).
//   - after the '<', each character of the name and of the white space around it may be
//     escaped too, as a reader decoding JSON or HTML takes it: an HTML entity (&#115;,
//     &#x73;, &amp;#115;, encoding/json's \u0026#115;, &Tab;, &hyphen;), a JSON, C or Go
//     escape (\u0073, \t, \n, \u2028, \x73, \u{73}, the backslash possibly doubled) or
//     URL encoding (%2D): "<&#115;ystem-reminder" and, in a call's JSON arguments,
//     "<system\t\nreminder" and "<\u2028system-reminder" are tags.
//
// The skeletons of the characters that matter come from table.go, generated once with
// golang.org/x/text and Unicode's confusables.txt by gen.go, so this package reads
// them with the standard library only.
package tagskel
