/*
 * printf.c - the one formatter behind kprintf, ksnprintf and the shell.
 *
 * A conversion is parsed into struct fmt_spec, its value is turned into
 * digits in a small local buffer, and fmt_emit() lays out sign, prefix,
 * zero fill and padding as C11 7.21.6.1 describes: precision is the minimum
 * number of digits (0 with precision 0 prints no digits), the 0 flag is
 * ignored with a precision or with '-', '+' beats ' ', and '#' adds 0x/0X to
 * non-zero hex and forces a leading 0 in octal. No libc and no floating point.
 */
#include <stdbool.h>
#include <stdint.h>

#include "lib/printf.h"

struct fmt_out {
	void (*out)(void *ctx, char c);
	void *ctx;
	int count;
};

struct fmt_spec {
	bool left, plus, space, alt, zero;
	int width;
	int prec;		/* -1 when absent */
	char length;		/* 0, 'H' (hh), 'h', 'l', 'L' (ll), 'z', 'j', 't' */
	char conv;
};

static void fmt_putc(struct fmt_out *o, char c)
{
	o->out(o->ctx, c);
	o->count++;
}

static void fmt_repeat(struct fmt_out *o, char c, int n)
{
	while (n-- > 0)
		fmt_putc(o, c);
}

static void fmt_puts(struct fmt_out *o, const char *s, int n)
{
	for (int i = 0; i < n; i++)
		fmt_putc(o, s[i]);
}

static int fmt_strnlen(const char *s, int max)
{
	int n = 0;

	while ((max < 0 || n < max) && s[n] != '\0')
		n++;
	return n;
}

/*
 * v / 10 with the remainder in *rem. A 32-bit build would otherwise call
 * libgcc's __udivmoddi4 for 64-bit division; shift-and-subtract needs nothing.
 */
static uintmax_t fmt_div10(uintmax_t v, unsigned *rem)
{
#if UINTPTR_MAX > 0xffffffffu
	*rem = (unsigned)(v % 10);
	return v / 10;
#else
	uintmax_t q = 0, r = 0;

	for (int i = (int)sizeof(v) * 8 - 1; i >= 0; i--) {
		r = (r << 1) | ((v >> i) & 1);
		if (r >= 10) {
			r -= 10;
			q |= (uintmax_t)1 << i;
		}
	}
	*rem = (unsigned)r;
	return q;
#endif
}

/* Digits of v in base 8, 10 or 16, most significant first; returns the count (0 for v == 0). */
static int fmt_digits(char *buf, uintmax_t v, unsigned base, bool upper)
{
	const char *set = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	unsigned shift = base == 16 ? 4 : 3;
	char rev[24];
	unsigned d;
	int n = 0;

	while (v != 0) {
		if (base == 10) {
			v = fmt_div10(v, &d);
		} else {
			d = (unsigned)(v & (base - 1));
			v >>= shift;
		}
		rev[n++] = set[d];
	}
	for (int i = 0; i < n; i++)
		buf[i] = rev[n - 1 - i];
	return n;
}

/* Lay out one formatted integer: [pad][sign][prefix][zeros]digits[pad]. */
static void fmt_emit(struct fmt_out *o, const struct fmt_spec *sp, char sign,
		     const char *prefix, const char *digits, int ndigits)
{
	int nprefix = fmt_strnlen(prefix, -1);
	int zeros = sp->prec > ndigits ? sp->prec - ndigits : 0;
	int body, pad;

	if (sp->prec < 0 && ndigits == 0)
		zeros = 1;	/* a zero value without precision still prints "0" */
	if (sp->conv == 'o' && sp->alt && zeros == 0 && (ndigits == 0 || digits[0] != '0'))
		zeros = 1;
	body = (sign ? 1 : 0) + nprefix + zeros + ndigits;
	pad = sp->width > body ? sp->width - body : 0;
	if (sp->zero && !sp->left && sp->prec < 0) {
		zeros += pad;
		pad = 0;
	}
	if (!sp->left)
		fmt_repeat(o, ' ', pad);
	if (sign)
		fmt_putc(o, sign);
	fmt_puts(o, prefix, nprefix);
	fmt_repeat(o, '0', zeros);
	fmt_puts(o, digits, ndigits);
	if (sp->left)
		fmt_repeat(o, ' ', pad);
}

static intmax_t fmt_signed_arg(const struct fmt_spec *sp, va_list *ap)
{
	switch (sp->length) {
	case 'H': return (signed char)va_arg(*ap, int);
	case 'h': return (short)va_arg(*ap, int);
	case 'l': return va_arg(*ap, long);
	case 'L': return va_arg(*ap, long long);
	case 'z': return va_arg(*ap, ptrdiff_t);	/* signed type of size_t's width */
	case 'j': return va_arg(*ap, intmax_t);
	case 't': return va_arg(*ap, ptrdiff_t);
	default:  return va_arg(*ap, int);
	}
}

static uintmax_t fmt_unsigned_arg(const struct fmt_spec *sp, va_list *ap)
{
	switch (sp->length) {
	case 'H': return (unsigned char)va_arg(*ap, unsigned);
	case 'h': return (unsigned short)va_arg(*ap, unsigned);
	case 'l': return va_arg(*ap, unsigned long);
	case 'L': return va_arg(*ap, unsigned long long);
	case 'z': return va_arg(*ap, size_t);
	case 'j': return va_arg(*ap, uintmax_t);
	case 't': return (uintmax_t)va_arg(*ap, ptrdiff_t);
	default:  return va_arg(*ap, unsigned);
	}
}

static void fmt_integer(struct fmt_out *o, const struct fmt_spec *sp, va_list *ap)
{
	char digits[24];
	const char *prefix = "";
	char sign = 0;
	uintmax_t v;
	unsigned base = 10;
	int n;

	if (sp->conv == 'd' || sp->conv == 'i') {
		intmax_t s = fmt_signed_arg(sp, ap);

		v = s < 0 ? -(uintmax_t)s : (uintmax_t)s;
		sign = s < 0 ? '-' : sp->plus ? '+' : sp->space ? ' ' : 0;
	} else {
		v = fmt_unsigned_arg(sp, ap);
		if (sp->conv == 'x' || sp->conv == 'X')
			base = 16;
		else if (sp->conv == 'o')
			base = 8;
		if (base == 16 && sp->alt && v != 0)
			prefix = sp->conv == 'X' ? "0X" : "0x";
	}
	n = fmt_digits(digits, v, base, sp->conv == 'X');
	fmt_emit(o, sp, sign, prefix, digits, n);
}

static void fmt_string(struct fmt_out *o, const struct fmt_spec *sp, const char *s, int len)
{
	int pad = sp->width > len ? sp->width - len : 0;

	if (!sp->left)
		fmt_repeat(o, ' ', pad);
	fmt_puts(o, s, len);
	if (sp->left)
		fmt_repeat(o, ' ', pad);
}

static void fmt_pointer(struct fmt_out *o, struct fmt_spec *sp, va_list *ap)
{
	uintptr_t p = (uintptr_t)va_arg(*ap, void *);
	char digits[24];

	if (p == 0) {
		fmt_string(o, sp, "(nil)", 5);
		return;
	}
	sp->conv = 'x';
	fmt_emit(o, sp, sp->plus ? '+' : sp->space ? ' ' : 0, "0x", digits,
		 fmt_digits(digits, p, 16, false));
}

static int fmt_number(const char **p)
{
	int v = 0;

	while (**p >= '0' && **p <= '9') {
		if (v < 100000000)	// saturate instead of overflowing
			v = v * 10 + (**p - '0');
		(*p)++;
	}
	return v;
}

/* Parse flags, width, precision and length after a '%'; *p ends on the conversion. */
static void fmt_parse(const char **p, struct fmt_spec *sp, va_list *ap)
{
	for (;; (*p)++) {
		if (**p == '-')
			sp->left = true;
		else if (**p == '+')
			sp->plus = true;
		else if (**p == ' ')
			sp->space = true;
		else if (**p == '#')
			sp->alt = true;
		else if (**p == '0')
			sp->zero = true;
		else
			break;
	}
	if (**p == '*') {
		sp->width = va_arg(*ap, int);
		if (sp->width < 0) {
			sp->left = true;
			sp->width = sp->width == INT32_MIN ? 0 : -sp->width;
		}
		(*p)++;
	} else {
		sp->width = fmt_number(p);
	}
	sp->prec = -1;
	if (**p == '.') {
		(*p)++;
		if (**p == '*') {
			sp->prec = va_arg(*ap, int);
			if (sp->prec < 0)
				sp->prec = -1;
			(*p)++;
		} else {
			sp->prec = fmt_number(p);
		}
	}
	sp->length = 0;
	if (**p == 'h' || **p == 'l') {
		char c = **p;

		(*p)++;
		if (**p == c) {
			sp->length = c == 'h' ? 'H' : 'L';
			(*p)++;
		} else {
			sp->length = c;
		}
	} else if (**p == 'z' || **p == 'j' || **p == 't') {
		sp->length = **p;
		(*p)++;
	}
	sp->conv = **p;
}

/* Returns false for a conversion this formatter does not know. */
static bool fmt_conversion(struct fmt_out *o, struct fmt_spec *sp, va_list *ap)
{
	char c;
	const char *s;

	switch (sp->conv) {
	case 'd': case 'i': case 'u': case 'o': case 'x': case 'X':
		fmt_integer(o, sp, ap);
		break;
	case 'c':
		c = (char)va_arg(*ap, int);
		fmt_string(o, sp, &c, 1);
		break;
	case 's':
		s = va_arg(*ap, const char *);
		if (s == NULL)
			s = "(null)";
		fmt_string(o, sp, s, fmt_strnlen(s, sp->prec));
		break;
	case 'p':
		fmt_pointer(o, sp, ap);
		break;
	case '%':
		fmt_putc(o, '%');
		break;
	default:
		return false;
	}
	return true;
}

int kvprintf_cb(void (*out)(void *ctx, char c), void *ctx, const char *fmt, va_list ap)
{
	struct fmt_out o = { .out = out, .ctx = ctx, .count = 0 };
	va_list aq;

	va_copy(aq, ap);
	for (const char *p = fmt; *p != '\0'; p++) {
		struct fmt_spec sp = { .prec = -1 };
		const char *start = p;

		if (*p != '%') {
			fmt_putc(&o, *p);
			continue;
		}
		p++;
		fmt_parse(&p, &sp, &aq);
		if (sp.conv == '\0') {	/* format ends inside a conversion */
			fmt_puts(&o, start, (int)(p - start));
			break;
		}
		if (!fmt_conversion(&o, &sp, &aq))	/* unknown: copy it as written */
			fmt_puts(&o, start, (int)(p - start) + 1);
	}
	va_end(aq);
	return o.count;
}

struct fmt_buf {
	char *buf;
	size_t n;
	size_t pos;
};

static void fmt_buf_putc(void *ctx, char c)
{
	struct fmt_buf *b = ctx;

	if (b->n != 0 && b->pos < b->n - 1)
		b->buf[b->pos] = c;
	b->pos++;
}

int kvsnprintf(char *buf, size_t n, const char *fmt, va_list ap)
{
	struct fmt_buf b = { .buf = buf, .n = n, .pos = 0 };
	int len = kvprintf_cb(fmt_buf_putc, &b, fmt, ap);

	if (n != 0)
		buf[b.pos < n - 1 ? b.pos : n - 1] = '\0';
	return len;
}

int ksnprintf(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = kvsnprintf(buf, n, fmt, ap);
	va_end(ap);
	return len;
}
