/*
 * nbprintf.c - nb_printf and nb_snprintf: formatted output for programs run
 * by nbprof (the nbprof SDK; nbprof.h declares them, sdk/nbprof-cc links
 * this file into every program and the linker drops it when unused).
 *
 * Why the formatting runs here, in the program, and not in the kernel:
 * the gate (int 0x82) passes two registers, and a va_list is no register
 * value - on x86-64 it points into the caller's register save area and
 * stack, on i386 it is a stack pointer, each by its own ABI - so the kernel
 * would have to walk the program's memory as the program's compiler laid
 * it out, and check every pointer a %s names before reading it. Formatted
 * here, only the finished bytes cross the gate, through NB_CALL_WRITE,
 * whose one buffer the kernel already checks.
 *
 * Conversions d i u x X o c s p %, flags - 0 + space #, a field width and a
 * precision (both may be *), length modifiers hh h l ll z j t, as C11
 * 7.21.6.1 says for them (%p: 0x and the hex digits; %s of NULL: "(null)";
 * an unknown conversion is copied as written). No floating point: the
 * programs are integer code. nb_printf writes in pieces of up to 256 bytes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "nbprof.h"

#define NB_PRINTF_BUF	256	/* bytes per write call */

struct nb_out {
	char *buf;		/* nb_snprintf's buffer, or the write buffer */
	unsigned long cap;	/* bytes buf holds, the NUL included */
	unsigned long used;	/* bytes in buf */
	unsigned long total;	/* characters produced */
	int console;		/* flush buf through nb_write when full */
};

struct nb_spec {
	int left, zero, plus, space, alt;
	int width, prec;	/* prec -1: none */
	int size;		/* 0 int, 1 long, 2 long long, -1 short, -2 char */
};

static void nb_putc(struct nb_out *o, char c)
{
	o->total++;
	if (o->console && o->used == o->cap) {
		nb_write(o->buf, o->used);
		o->used = 0;
	}
	if (o->used + !o->console < o->cap)
		o->buf[o->used++] = c;
}

static void nb_pad(struct nb_out *o, char c, int n)
{
	while (n-- > 0)
		nb_putc(o, c);
}

static int nb_digits(char *tmp, unsigned long long v, unsigned base, int upper)
{
	int n = 0;

	do {
		unsigned d = (unsigned)(v % base);

		tmp[n++] = (char)(d < 10 ? '0' + d : (upper ? 'A' : 'a') + d - 10);
		v /= base;
	} while (v);
	return n;
}

/*
 * One number: sign or 0x, zeros to the precision or the width, the digits
 * (reversed in tmp). hex_prefix: 0x before them (%p, and %#x of a nonzero
 * value; 0X for %#X); %#o makes the first digit a 0.
 */
static void nb_number(struct nb_out *o, const struct nb_spec *sp, unsigned long long v,
		      char sign, unsigned base, int upper, int hex_prefix)
{
	char tmp[24];
	int n = (sp->prec == 0 && v == 0) ? 0 : nb_digits(tmp, v, base, upper);
	int zeros = sp->prec > n ? sp->prec - n : 0;
	int extra = (sign != 0) + 2 * hex_prefix;
	int pad;

	if (sp->alt && base == 8 && zeros == 0 && (n == 0 || tmp[n - 1] != '0'))
		zeros = 1;
	pad = sp->width - n - zeros - extra;

	if (sp->zero && !sp->left && sp->prec < 0) {
		zeros += pad > 0 ? pad : 0;
		pad = 0;
	}
	if (!sp->left)
		nb_pad(o, ' ', pad);
	if (sign)
		nb_putc(o, sign);
	if (hex_prefix) {
		nb_putc(o, '0');
		nb_putc(o, upper ? 'X' : 'x');
	}
	nb_pad(o, '0', zeros);
	while (n)
		nb_putc(o, tmp[--n]);
	if (sp->left)
		nb_pad(o, ' ', pad);
}

static void nb_string(struct nb_out *o, const struct nb_spec *sp, const char *s)
{
	int n = 0;

	while ((sp->prec < 0 || n < sp->prec) && s[n])
		n++;
	if (!sp->left)
		nb_pad(o, ' ', sp->width - n);
	for (int i = 0; i < n; i++)
		nb_putc(o, s[i]);
	if (sp->left)
		nb_pad(o, ' ', sp->width - n);
}

/* Flags, width, precision and length of the conversion at *p (just after its '%'). */
static void nb_parse(const char **p, struct nb_spec *sp, va_list *ap)
{
	const char *s = *p;

	*sp = (struct nb_spec){ .prec = -1 };
	for (;; s++) {
		if (*s == '-')
			sp->left = 1;
		else if (*s == '0')
			sp->zero = 1;
		else if (*s == '+')
			sp->plus = 1;
		else if (*s == ' ')
			sp->space = 1;
		else if (*s == '#')
			sp->alt = 1;
		else
			break;
	}
	if (*s == '*') {
		sp->width = va_arg(*ap, int);
		if (sp->width < 0) {
			sp->left = 1;
			sp->width = -sp->width;
		}
		s++;
	}
	while (*s >= '0' && *s <= '9')
		sp->width = sp->width * 10 + (*s++ - '0');
	if (*s == '.') {
		s++;
		sp->prec = 0;
		if (*s == '*') {
			sp->prec = va_arg(*ap, int);
			sp->prec = sp->prec < 0 ? -1 : sp->prec;
			s++;
		}
		while (*s >= '0' && *s <= '9')
			sp->prec = sp->prec * 10 + (*s++ - '0');
	}
	for (;; s++) {
		if (*s == 'h')
			sp->size = sp->size == -1 ? -2 : -1;
		else if (*s == 'l')
			sp->size++;
		else if (*s == 'z' || *s == 'j' || *s == 't')
			sp->size = *s == 'j' ? 2 : 1;	/* size_t, ptrdiff_t: long; intmax_t: long long */
		else
			break;
	}
	*p = s;
}

static long long nb_signed(const struct nb_spec *sp, va_list *ap)
{
	if (sp->size >= 2)
		return va_arg(*ap, long long);
	if (sp->size == 1)
		return va_arg(*ap, long);
	if (sp->size == -1)
		return (short)va_arg(*ap, int);
	if (sp->size == -2)
		return (signed char)va_arg(*ap, int);
	return va_arg(*ap, int);
}

static unsigned long long nb_unsigned(const struct nb_spec *sp, va_list *ap)
{
	if (sp->size >= 2)
		return va_arg(*ap, unsigned long long);
	if (sp->size == 1)
		return va_arg(*ap, unsigned long);
	if (sp->size == -1)
		return (unsigned short)va_arg(*ap, unsigned);
	if (sp->size == -2)
		return (unsigned char)va_arg(*ap, unsigned);
	return va_arg(*ap, unsigned);
}

/* The conversion c of spec sp; 0 when c is none (copied as written by the caller). */
static int nb_convert(struct nb_out *o, struct nb_spec *sp, char c, va_list *ap)
{
	long long v;
	unsigned long long u;

	switch (c) {
	case 'd': case 'i':
		v = nb_signed(sp, ap);
		nb_number(o, sp, v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v,
			  v < 0 ? '-' : sp->plus ? '+' : sp->space ? ' ' : 0, 10, 0, 0);
		return 1;
	case 'u': case 'x': case 'X': case 'o':
		u = nb_unsigned(sp, ap);
		nb_number(o, sp, u, 0, c == 'u' ? 10 : c == 'o' ? 8 : 16, c == 'X',
			  sp->alt && u && (c == 'x' || c == 'X'));
		return 1;
	case 'p':
		nb_number(o, sp, (uintptr_t)va_arg(*ap, void *), 0, 16, 0, 1);
		return 1;
	case 'c':			/* a NUL character is still one character */
		if (!sp->left)
			nb_pad(o, ' ', sp->width - 1);
		nb_putc(o, (char)va_arg(*ap, int));
		if (sp->left)
			nb_pad(o, ' ', sp->width - 1);
		return 1;
	case 's': {
		const char *s = va_arg(*ap, const char *);

		nb_string(o, sp, s ? s : "(null)");
		return 1;
	}
	case '%':
		nb_putc(o, '%');
		return 1;
	}
	return 0;
}

static void nb_format(struct nb_out *o, const char *fmt, va_list ap)
{
	va_list aq;

	va_copy(aq, ap);
	while (*fmt) {
		const char *start = fmt;
		struct nb_spec sp;

		if (*fmt != '%') {
			nb_putc(o, *fmt++);
			continue;
		}
		fmt++;
		nb_parse(&fmt, &sp, &aq);
		if (*fmt && nb_convert(o, &sp, *fmt, &aq)) {
			fmt++;
			continue;
		}
		while (start < fmt)		/* unknown: as written */
			nb_putc(o, *start++);
	}
	va_end(aq);
}

int nb_vsnprintf(char *buf, unsigned long n, const char *fmt, va_list ap)
{
	struct nb_out o = { .buf = buf, .cap = n };

	nb_format(&o, fmt, ap);
	if (n)
		buf[o.used] = 0;
	return (int)o.total;
}

int nb_snprintf(char *buf, unsigned long n, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = nb_vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	return r;
}

int nb_vprintf(const char *fmt, va_list ap)
{
	char buf[NB_PRINTF_BUF];
	struct nb_out o = { .buf = buf, .cap = sizeof(buf), .console = 1 };

	nb_format(&o, fmt, ap);
	if (o.used)
		nb_write(buf, o.used);
	return (int)o.total;
}

int nb_printf(const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = nb_vprintf(fmt, ap);
	va_end(ap);
	return r;
}
