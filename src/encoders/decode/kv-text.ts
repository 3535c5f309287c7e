/**
 * Decoding of the text-line formats (CEF, LEEF, RFC 5424): header fields, key/value pairs and each
 * dialect's escapes, then the `pct-c0-v1` layer, which returns every value's exact original text.
 */
import { pctC0Decode } from '../pct-c0.js';
import { ExportDecodeError } from './record-fields.js';

/** Splits `text` on unescaped `sep` (a `\` escapes the next character) and drops the escapes' backslashes. */
export function splitEscaped(text: string, sep: string, limit: number): { fields: string[]; rest: string } {
  const fields: string[] = [];
  let cur = '';
  let i = 0;
  for (; i < text.length && fields.length < limit; i++) {
    const c = text[i] as string;
    if (c === '\\' && i + 1 < text.length) {
      cur += text[++i];
    } else if (c === sep) {
      fields.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  if (fields.length < limit) throw new ExportDecodeError(`header has ${fields.length} of ${limit} fields`);
  return { fields, rest: text.slice(i) };
}

/**
 * CEF extension pairs (CEF v27 "Character Encoding"): every `=` inside a value is escaped, so each
 * unescaped `=` ends a key, and the key starts after the last space before it. Values are unescaped
 * (`\\`, `\=`, `\r`, `\n`) and pct-c0-decoded.
 */
export function cefExtensionPairs(ext: string): Map<string, string> {
  const eqs: number[] = [];
  for (let i = 0; i < ext.length; i++) {
    const c = ext.charCodeAt(i);
    if (c === 0x5c) i++; // skip the escaped character
    else if (c === 0x3d) eqs.push(i);
  }
  const out = new Map<string, string>();
  let keyStart = 0;
  for (let k = 0; k < eqs.length; k++) {
    const eq = eqs[k] as number;
    const key = ext.slice(keyStart, eq);
    if (!/^[A-Za-z0-9_.\-]+$/.test(key)) throw new ExportDecodeError(`malformed extension key ${JSON.stringify(key.slice(0, 40))}`);
    const next = eqs[k + 1];
    let end = ext.length;
    if (next !== undefined) {
      end = ext.lastIndexOf(' ', next);
      if (end <= eq) throw new ExportDecodeError(`no space before the key that follows ${key}`);
    }
    out.set(key, decodeValue(unescapeCefValue(ext.slice(eq + 1, end)), key));
    keyStart = end + 1;
  }
  return out;
}

function unescapeCefValue(v: string): string {
  if (!v.includes('\\')) return v;
  let out = '';
  for (let i = 0; i < v.length; i++) {
    const c = v[i] as string;
    if (c !== '\\' || i + 1 === v.length) {
      out += c;
      continue;
    }
    const n = v[++i] as string;
    out += n === 'n' ? '\n' : n === 'r' ? '\r' : n;
  }
  return out;
}

/** LEEF 2.0 attributes: split on the declared delimiter, each at its first `=`; values carry only the pct-c0 layer. */
export function leefAttributePairs(attrs: string, delimiter: string): Map<string, string> {
  const out = new Map<string, string>();
  if (attrs === '') return out;
  for (const part of attrs.split(delimiter)) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new ExportDecodeError(`malformed attribute ${JSON.stringify(part.slice(0, 40))}`);
    const key = part.slice(0, eq);
    out.set(key, decodeValue(part.slice(eq + 1), key));
  }
  return out;
}

/**
 * The SD-PARAMs of the first SD-ELEMENT of `sd` (RFC 5424 §6.3: `[id name="value" …]`, values
 * escaping `\`, `"`, `]`), pct-c0-decoded; returns the params and the text after the element.
 */
export function sdElementParams(sd: string, sdId: string): { params: Map<string, string>; rest: string } {
  if (!sd.startsWith(`[${sdId}`)) throw new ExportDecodeError(`no [${sdId} …] structured data`);
  const params = new Map<string, string>();
  let i = sdId.length + 1;
  for (;;) {
    if (sd[i] === ']') return { params, rest: sd.slice(i + 1) };
    if (sd[i] !== ' ') throw new ExportDecodeError('malformed structured data');
    const eq = sd.indexOf('="', i);
    if (eq < 0) throw new ExportDecodeError('malformed SD-PARAM');
    const name = sd.slice(i + 1, eq);
    let value = '';
    let j = eq + 2;
    for (; j < sd.length && sd[j] !== '"'; j++) {
      if (sd[j] === '\\' && j + 1 < sd.length) j++;
      value += sd[j];
    }
    if (j >= sd.length) throw new ExportDecodeError(`unterminated value of ${name}`);
    params.set(name, decodeValue(value, name));
    i = j + 1;
  }
}

function decodeValue(v: string, key: string): string {
  try {
    return pctC0Decode(v);
  } catch (err) {
    throw new ExportDecodeError(`${key}: ${(err as Error).message}`);
  }
}
