// serial.js: a ticket's serial read as crates/emission/src/serial.rs's
// `Serial::parse` reads it, for the counter's camera (shop.js): a barcode
// read wrongly, or a code that is not a ticket's serial, is refused before
// it reaches the field. `ASC-001-00001-000042-81`: a game code (2 to 6
// capitals or digits, a letter first), the emission (3 digits, 1 to 999),
// the block (5 digits, from 1), the position (6 digits, from 1) and two
// check digits (ISO 7064 MOD 97-10 over the code, each character as two
// digits, 0-9 as 00-09 and A-Z as 10-35, then the emission, block and
// position digits); with or without dashes, either case.

/**
 * The serial `text` written with its dashes (`ASC-001-00001-000042-81`),
 * or null when it is not a serial or its check digits are wrong.
 */
export function parseSerial(text) {
  // Capitals of ASCII letters only, as Rust's to_ascii_uppercase ('ſ' stays 'ſ', not 'S').
  const upper = String(text).trim().replace(/[a-z]/g, (c) => c.toUpperCase());
  let code;
  let digits;
  if (upper.includes('-')) {
    const parts = upper.split('-');
    const widths = [3, 5, 6, 2];
    if (parts.length !== 5 || parts.slice(1).some((p, i) => p.length !== widths[i])) return null;
    code = parts[0];
    digits = parts.slice(1).join('');
  } else {
    if (upper.length < 2 + 16) return null;
    code = upper.slice(0, upper.length - 16);
    digits = upper.slice(upper.length - 16);
  }
  if (!/^[0-9]{16}$/.test(digits) || !/^[A-Z][A-Z0-9]{1,5}$/.test(code)) return null;
  const emission = Number(digits.slice(0, 3));
  const block = Number(digits.slice(3, 8));
  const position = Number(digits.slice(8, 14));
  if (emission < 1 || block < 1 || position < 1) return null;
  let remainder = 0;
  for (const character of code) remainder = (remainder * 100 + parseInt(character, 36)) % 97;
  for (const digit of digits.slice(0, 14)) remainder = (remainder * 10 + Number(digit)) % 97;
  const check = 98 - ((remainder * 100) % 97);
  if (check !== Number(digits.slice(14))) return null;
  return `${code}-${digits.slice(0, 3)}-${digits.slice(3, 8)}-${digits.slice(8, 14)}-${digits.slice(14)}`;
}
