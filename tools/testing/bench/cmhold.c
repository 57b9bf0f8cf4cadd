// SPDX-License-Identifier: GPL-2.0
/*
 * cmhold - hold N rdma_cm connections open until told to close them, so
 * that the benchmark can measure the memory of established connections
 * and of the ids that are left in timewait once they are closed.
 *
 * The connections have no QPs: like cmtime's "no QPs" pass they carry
 * made-up QP numbers, so that what the memory counters show is the
 * connection managers' own (ib_cm, rdma_cm, ucma), not the device's QPs.
 *
 *   cmhold -l ADDR [-p PORT] -c N [-T SECS]
 *	passive side: accept N connections on ADDR:PORT, answer every
 *	DREQ, exit when all N are closed.
 *   cmhold -s ADDR [-p PORT] -c N [-w WINDOW] [-t ACK_TIMEOUT] [-T SECS]
 *	active side: make N connections to ADDR:PORT, at most WINDOW of them
 *	in progress at a time; once all are up wait for SIGUSR1, then
 *	disconnect them all and exit when every DREP is in.
 *
 * Both sides print "established N" when all N are up and "closed N" when
 * all are gone; each id is destroyed as soon as its connection is closed,
 * so "closed" means that every id of this side is in timewait.  -t sets
 * rdma_cm's ACK timeout, from which it derives the path's packet lifetime
 * and the CM its timewait (4.096 us * 2^ACK_TIMEOUT): a long timewait
 * gives the caller time to look at the ids in it.  -T is a safety limit:
 * exit with status 2 after SECS seconds (default 600).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

/* Made-up QP numbers, different on either side (24 bits). */
#define ACTIVE_QPN_BASE		0x100000
#define PASSIVE_QPN_BASE	0x200000

static struct rdma_event_channel *channel;
static struct rdma_cm_id **ids;
static struct sockaddr_in addr;
static int conns = 1, window = 32, ack_timeout;
static int started, established, closed;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void fail_event(struct rdma_cm_event *ev)
{
	fprintf(stderr, "cmhold: unexpected %s (status %d) after %d established\n",
		rdma_event_str(ev->event), ev->status, established);
	exit(1);
}

static void conn_param(struct rdma_conn_param *p, unsigned int qpn)
{
	memset(p, 0, sizeof(*p));
	p->responder_resources = 1;
	p->initiator_depth = 1;
	p->qp_num = qpn;
}

/* Active side: start the next connection; it goes on in the events. */
static void start_one(void)
{
	struct rdma_cm_id *id;
	uint8_t t = ack_timeout;

	if (rdma_create_id(channel, &id, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	/* The index is the context: ids[] is where the id is destroyed. */
	id->context = (void *)(long)started;
	ids[started++] = id;
	if (ack_timeout &&
	    rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t, sizeof(t)))
		die("rdma_set_option ACK_TIMEOUT");
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&addr, 2000))
		die("rdma_resolve_addr");
}

static void say(const char *what, int n)
{
	printf("%s %d\n", what, n);
	fflush(stdout);
}

static void destroy(struct rdma_cm_id *id)
{
	if (rdma_destroy_id(id))
		die("rdma_destroy_id");
	closed++;
}

/* One event of the active side; the event has been acked. */
static void active_event(enum rdma_cm_event_type type, struct rdma_cm_id *id)
{
	struct rdma_conn_param p;
	long i = (long)id->context;

	switch (type) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(id, 2000))
			die("rdma_resolve_route");
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		conn_param(&p, ACTIVE_QPN_BASE + i);
		if (rdma_connect(id, &p))
			die("rdma_connect");
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		/* Without a QP the RTU is ours to send. */
		if (rdma_establish(id))
			die("rdma_establish");
		if (++established == conns)
			say("established", established);
		else if (started < conns)
			start_one();
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		ids[i] = NULL;
		destroy(id);
		break;
	default:
		break;
	}
}

/* One event of the passive side; the event has been acked. */
static void passive_event(enum rdma_cm_event_type type, struct rdma_cm_id *id)
{
	struct rdma_conn_param p;

	switch (type) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		conn_param(&p, PASSIVE_QPN_BASE + started++);
		if (rdma_accept(id, &p))
			die("rdma_accept");
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (++established == conns)
			say("established", established);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		/* The DREP; destroying the id would send it too. */
		rdma_disconnect(id);
		destroy(id);
		break;
	default:
		break;
	}
}

static int expected(enum rdma_cm_event_type type)
{
	switch (type) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
	case RDMA_CM_EVENT_CONNECT_REQUEST:
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
	case RDMA_CM_EVENT_ESTABLISHED:
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return 1;
	default:
		return 0;
	}
}

/* Handle events until COUNTER reaches conns. */
static void events_until(int *counter, int passive)
{
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type type;
	struct rdma_cm_id *id;

	while (*counter < conns) {
		if (rdma_get_cm_event(channel, &ev))
			die("rdma_get_cm_event");
		if (!expected(ev->event))
			fail_event(ev);
		type = ev->event;
		id = ev->id;
		/* An id can only be destroyed once its events are acked. */
		rdma_ack_cm_event(ev);
		if (passive)
			passive_event(type, id);
		else
			active_event(type, id);
	}
}

static void run_active(void)
{
	sigset_t usr1;
	int sig, i;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &usr1, NULL))
		die("sigprocmask");
	while (started < conns && started < window)
		start_one();
	events_until(&established, 0);
	if (sigwait(&usr1, &sig))
		die("sigwait");
	for (i = 0; i < conns; i++)
		if (rdma_disconnect(ids[i]))
			die("rdma_disconnect");
	events_until(&closed, 0);
	say("closed", closed);
}

static void run_passive(void)
{
	struct rdma_cm_id *listen_id;

	if (rdma_create_id(channel, &listen_id, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	if (rdma_bind_addr(listen_id, (struct sockaddr *)&addr))
		die("rdma_bind_addr");
	if (rdma_listen(listen_id, 0))
		die("rdma_listen");
	say("listening", ntohs(addr.sin_port));
	events_until(&established, 1);
	events_until(&closed, 1);
	rdma_destroy_id(listen_id);
	say("closed", closed);
}

static void usage(void)
{
	fprintf(stderr, "usage: cmhold -l ADDR | -s ADDR [-p PORT] [-c N] [-w WINDOW]\n"
		"              [-t ACK_TIMEOUT] [-T SECS]\n");
	exit(2);
}

static void too_long(int sig)
{
	static const char msg[] = "cmhold: time limit reached\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(2);
}

int main(int argc, char **argv)
{
	const char *host = NULL;
	int passive = 0, port = 7600, limit = 600, op;

	while ((op = getopt(argc, argv, "l:s:p:c:w:t:T:")) != -1) {
		switch (op) {
		case 'l':
			passive = 1;
			host = optarg;
			break;
		case 's':
			host = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 'c':
			conns = atoi(optarg);
			break;
		case 'w':
			window = atoi(optarg);
			break;
		case 't':
			ack_timeout = atoi(optarg);
			break;
		case 'T':
			limit = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (!host || conns < 1 || window < 1 || ack_timeout < 0 || ack_timeout > 31)
		usage();
	addr.sin_family = AF_INET;
	addr.sin_port = htons(port);
	if (inet_pton(AF_INET, host, &addr.sin_addr) != 1)
		usage();
	signal(SIGALRM, too_long);
	alarm(limit);

	channel = rdma_create_event_channel();
	if (!channel)
		die("rdma_create_event_channel");
	ids = calloc(conns, sizeof(*ids));
	if (!ids)
		die("calloc");
	if (passive)
		run_passive();
	else
		run_active();
	rdma_destroy_event_channel(channel);
	return 0;
}
