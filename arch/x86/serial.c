/*
 * serial.c - polled 16550 UART.
 *
 * Register offsets and bits follow the 16550 data sheet (National
 * Semiconductor PC16550D). Everything is polled: IER stays 0, so the UART
 * never interrupts. The presence check writes the scratch register, which
 * 8250-class chips and QEMU's model both keep.
 */
#include "arch/x86/io.h"
#include "arch/x86/serial.h"

enum uart_reg {
	UART_DATA = 0,		/* RBR/THR; DLL when LCR.DLAB */
	UART_IER = 1,		/* DLM when LCR.DLAB */
	UART_FCR = 2,
	UART_LCR = 3,
	UART_MCR = 4,
	UART_LSR = 5,
	UART_SCR = 7,
};

#define UART_LCR_8N1		0x03
#define UART_LCR_DLAB		0x80
#define UART_FCR_ENABLE		0x01
#define UART_FCR_CLEAR		0x06	/* clear RX and TX FIFOs */
#define UART_FCR_TRIGGER_14	0xc0
#define UART_MCR_DTR_RTS_OUT2	0x0b
#define UART_LSR_DR		0x01	/* data ready */
#define UART_LSR_THRE		0x20	/* transmit holding register empty */

static uint16_t uart_base = SERIAL_COM1;
static uint32_t uart_baud = SERIAL_CLOCK_BAUD;

bool serial_init(uint16_t port, uint32_t baud)
{
	uint16_t div = (uint16_t)(SERIAL_CLOCK_BAUD / (baud ? baud : SERIAL_CLOCK_BAUD));

	outb(port + UART_SCR, 0x5a);
	if (inb(port + UART_SCR) != 0x5a)
		return false;
	uart_base = port;
	uart_baud = SERIAL_CLOCK_BAUD / (div ? div : 1);
	outb(port + UART_IER, 0);
	outb(port + UART_LCR, UART_LCR_DLAB);
	outb(port + UART_DATA, div & 0xff);
	outb(port + UART_IER, div >> 8);
	outb(port + UART_LCR, UART_LCR_8N1);
	outb(port + UART_FCR, UART_FCR_ENABLE | UART_FCR_CLEAR | UART_FCR_TRIGGER_14);
	outb(port + UART_MCR, UART_MCR_DTR_RTS_OUT2);
	return true;
}

void serial_putc(char c)
{
	while (!(inb(uart_base + UART_LSR) & UART_LSR_THRE))
		;
	outb(uart_base + UART_DATA, (uint8_t)c);
}

int serial_getc_nowait(void)
{
	if (!(inb(uart_base + UART_LSR) & UART_LSR_DR))
		return -1;
	return inb(uart_base + UART_DATA);
}

uint16_t serial_port(void)
{
	return uart_base;
}

uint32_t serial_baud(void)
{
	return uart_baud;
}
