package escape

// LatinLike reports a character that reads as a Latin letter or a dash
// among Latin letters although UTS #39 does not list it as confusable:
// the small capitals of the phonetic alphabets (ᴇ, ʀ, ɴ), and Han, kana
// and CJK strokes drawn as a single stroke or a plain shape (丨, 一, 丶,
// ノ, ー, 口, 工). Browsers refuse these inside a Latin label for the
// same reason. Among letters of their own script (Chinese, Japanese)
// they are ordinary characters.
func LatinLike(r rune) bool {
	switch {
	case r >= 0x1d00 && r <= 0x1d22, // ᴀ ... ᴢ and the other phonetic small capitals
		r >= 0x31c0 && r <= 0x31ef, // CJK strokes
		r >= 0x2f00 && r <= 0x2fdf: // Kangxi radicals
		return true
	}
	switch r {
	case 0x0262, 0x026a, 0x0274, 0x0276, 0x0280, 0x0281, 0x028f, 0x0299, 0x029b, 0x029c, 0x029f, // ɢ ɪ ɴ ɶ ʀ ʁ ʏ ʙ ʛ ʜ ʟ
		0xa730, 0xa731, 0xa7af, 0xa7ae, 0xa7f9, 0xa7fa, // ꜰ ꜱ ꞯ Ɪ ꟹ ꟺ
		0x3007,                                                                 // 〇
		0x4e00, 0x4e28, 0x4e36, 0x4e3f, 0x4e40, 0x4e41, 0x4e59, 0x4e5a, 0x4e85, // 一 丨 丶 丿 乀 乁 乙 乚 亅
		0x4e8c, 0x4ea0, 0x4eba, 0x5182, 0x5196, 0x5341, 0x535c, 0x53e3, 0x5de5, // 二 亠 人 冂 冖 十 卜 口 工
		0x30fc, 0x30ce, 0x30f3, 0x30bd, 0x30be, 0x30cb, 0x30c8, 0x30ed, 0x30a8, 0x30d8, 0x3078, 0x30fd, 0x30fe, // ー ノ ン ソ ゾ ニ ト ロ エ ヘ へ ヽ ヾ
		0x309d, 0x309e, 0x3003, 0x3006: // ゝ ゞ 〃 〆
		return true
	}
	return false
}
