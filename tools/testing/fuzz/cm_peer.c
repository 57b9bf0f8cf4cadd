// SPDX-License-Identifier: GPL-2.0
/*
 * cm_peer - rdma_cm end points without QPs, for the fuzz tests.
 *
 * The CM only carries QP numbers; rdma_cm lets an application accept or
 * make a connection with a QP number of its choosing and no QP (as
 * cmtime's "no QPs" pass does).  That makes end points that cost nothing
 * and survive whatever a fuzzer does to their connections.
 *
 *   cm_peer -s [-u] [-k N] [-x] -a ADDR -p PORT
 *	Listen at ADDR:PORT in the TCP port space and, with -u, the UDP one.
 *	Accept connection requests with a made-up QP number and answer SIDR
 *	requests; with -k N only one request in N (the 1st, the N+1st, ...)
 *	and reject the others.  With -x, destroy each id right after
 *	rdma_accept(), with its REP on the wire: the CM then rejects the
 *	connection.  Connections that fail, are rejected or disconnected are
 *	destroyed; none of that ends the program.
 *
 *   cm_peer -c -a ADDR -p PORT -n N
 *	Make N connections to ADDR:PORT and complete them (RTU) without
 *	QPs.  Prints "established N" once all are set up, then holds them.
 *
 *   cm_peer -c -1 [-w MS] -a ADDR -p PORT -n N
 *	Make N connections one at a time, each to its end before the next
 *	starts: rejected (before or after the RTU), disconnected by the
 *	peer, or failed otherwise; a connection that is established and
 *	hears nothing more within MS milliseconds (300) stays, and is
 *	counted so, disconnected and destroyed (slowest_ms: the longest an
 *	established one waited to hear).  A connection that has no answer
 *	within 10 s fails.  Ends by itself after the N-th.
 *
 * They run until SIGINT or SIGTERM (or the N-th connection of -1), then
 * destroy everything (a client disconnects first), print their counts as
 * "cm_peer KEY VALUE" lines and exit: 0, or 1 if a client could not
 * establish all its connections (with -1: if any connection stayed or
 * failed).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define MAX_CONNS	65536
#define SERVER_QPN	0x5e0000	/* made-up QP numbers, plus an index */
#define CLIENT_QPN	0xc10000
#define ANSWER_MS	10000		/* for a connection of -1 to hear back */

enum conn_state { FREE, CONNECTING, ESTABLISHED };

struct conn {
	struct rdma_cm_id *id;
	enum conn_state state;
};

/* How a connection of -1 ended. */
enum outcome {
	OUT_REJECTED, OUT_REJECTED_ESTABLISHED, OUT_DISCONNECTED, OUT_STAYED,
	OUT_FAILED, OUT_N_OUTCOMES
};

static const char * const outcome_names[OUT_N_OUTCOMES] = {
	"rejected", "rejected_established", "disconnected", "stayed",
	"failed",
};

static struct {
	bool server, udp, verbose, destroy_accepted, one_by_one;
	const char *addr, *port;
	unsigned int accept_every, n_conns, wait_ms;
	struct rdma_addrinfo *ai;
	/* -1: the connection in progress, its deadline, how many began */
	struct conn *cur;
	struct timespec deadline;
	unsigned int started;
	unsigned long outcomes[OUT_N_OUTCOMES], establish_errors;
	long slowest_ms;	/* the longest an established one waited */
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen[2];
	struct conn conns[MAX_CONNS];
	unsigned int free_slots[MAX_CONNS], n_free;
	unsigned long requests;
	/* counts, printed at the end */
	unsigned long connect_requests, sidr_requests, accepted, rejected;
	unsigned long established, disconnected, errors, lost, failed;
	unsigned long events[32];
	bool announced;
} p;

/* SIGINT and SIGTERM arrive on a signalfd and set this. */
static bool stop;
static int sigfd = -1;

static void init_conns(void)
{
	unsigned int i;

	for (i = 0; i < MAX_CONNS; i++)
		p.free_slots[i] = MAX_CONNS - 1 - i;
	p.n_free = MAX_CONNS;
}

static struct conn *new_conn(struct rdma_cm_id *id)
{
	struct conn *c;

	if (!p.n_free)
		return NULL;
	c = &p.conns[p.free_slots[--p.n_free]];
	c->id = id;
	c->state = CONNECTING;
	id->context = c;
	return c;
}

static void free_conn(struct conn *c)
{
	c->id->context = NULL;
	c->state = FREE;
	c->id = NULL;
	p.free_slots[p.n_free++] = (unsigned int)(c - p.conns);
}

/* Called after the event is acknowledged: rdma_destroy_id() waits for it. */
static void drop_conn(struct conn *c)
{
	struct rdma_cm_id *id;

	if (!c || c->state == FREE)
		return;
	id = c->id;
	if (c == p.cur)
		p.cur = NULL;
	free_conn(c);
	rdma_destroy_id(id);
}

/* Answer a request; returns true if its id stays (an accepted RC one). */
static bool answer_request(struct rdma_cm_event *ev)
{
	struct rdma_conn_param param = {
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct rdma_cm_id *id = ev->id;
	bool ud = id->ps == RDMA_PS_UDP;
	struct conn *c = NULL;

	p.requests++;
	if (ud)
		p.sidr_requests++;
	else
		p.connect_requests++;
	param.qp_num = SERVER_QPN + (p.requests & 0xffff);

	if (p.accept_every > 1 && p.requests % p.accept_every != 1) {
		rdma_reject(id, NULL, 0);
		p.rejected++;
		return false;
	}
	if (!ud) {
		c = new_conn(id);
		if (!c) {
			rdma_reject(id, NULL, 0);
			p.rejected++;
			return false;
		}
	}
	if (rdma_accept(id, &param)) {
		if (p.verbose)
			perror("cm_peer: rdma_accept");
		p.errors++;
		if (c)
			free_conn(c);
		return false;
	}
	p.accepted++;
	/* With -x the id goes as soon as the event is acknowledged. */
	return !ud && !p.destroy_accepted;
}

static int connect_conn(struct rdma_cm_id *id)
{
	struct conn *c = id->context;
	struct rdma_conn_param param = {
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
		.qp_num = CLIENT_QPN + (unsigned int)(c - p.conns),
	};

	/*
	 * -1 reuses one slot: a QP number of its own for each connection,
	 * or the CM takes the next one, with the same QP number and CA GUID
	 * as one in timewait, for a stale connection.
	 */
	if (p.one_by_one)
		param.qp_num = CLIENT_QPN + (p.started & 0xffff);

	if (rdma_connect(id, &param)) {
		perror("cm_peer: rdma_connect");
		return -1;
	}
	return 0;
}

/* The deadline of -1's connection in progress, MS from now. */
static void set_deadline(unsigned int ms)
{
	clock_gettime(CLOCK_MONOTONIC, &p.deadline);
	p.deadline.tv_sec += ms / 1000;
	p.deadline.tv_nsec += (long)(ms % 1000) * 1000000;
	if (p.deadline.tv_nsec >= 1000000000) {
		p.deadline.tv_sec++;
		p.deadline.tv_nsec -= 1000000000;
	}
}

/* Milliseconds left until that deadline, 0 if it has passed. */
static long ms_left(void)
{
	struct timespec now;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (p.deadline.tv_sec - now.tv_sec) * 1000 +
	     (p.deadline.tv_nsec - now.tv_nsec) / 1000000;
	return ms > 0 ? ms : 0;
}

/* -1: the connection in progress ended so; its id is to be destroyed. */
static bool ended(enum outcome o)
{
	p.outcomes[o]++;
	if (p.verbose)
		fprintf(stderr, "cm_peer: connection %u %s\n", p.started,
			outcome_names[o]);
	return true;
}

/* An established connection of -1 heard from its peer. */
static void waited(void)
{
	long ms = (long)p.wait_ms - ms_left();

	if (ms > p.slowest_ms)
		p.slowest_ms = ms;
}

/* handle() for -1's client. */
static bool handle_one(struct rdma_cm_event *ev, struct conn *c)
{
	bool est = c && c->state == ESTABLISHED;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(ev->id, 2000))
			return ended(OUT_FAILED);
		return false;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (connect_conn(ev->id))
			return ended(OUT_FAILED);
		return false;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		if (rdma_establish(ev->id)) {
			/* Rejected meanwhile: REJECTED follows. */
			p.establish_errors++;
			return false;
		}
		c->state = ESTABLISHED;
		p.established++;
		set_deadline(p.wait_ms);
		return false;
	case RDMA_CM_EVENT_REJECTED:
		if (est)
			waited();
		return ended(est ? OUT_REJECTED_ESTABLISHED : OUT_REJECTED);
	case RDMA_CM_EVENT_DISCONNECTED:
		p.disconnected++;
		rdma_disconnect(ev->id);
		if (est)
			waited();
		return ended(est ? OUT_DISCONNECTED : OUT_FAILED);
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		p.errors++;
		return ended(OUT_FAILED);
	default:
		return false;
	}
}

/*
 * Handle one event.  Returns true when the event's id is to be destroyed
 * once the event is acknowledged.
 */
static bool handle(struct rdma_cm_event *ev)
{
	struct conn *c = ev->id->context;
	bool listener = ev->id == p.listen[0] || ev->id == p.listen[1];

	if ((unsigned int)ev->event < ARRAY_SIZE(p.events))
		p.events[ev->event]++;
	if (p.verbose)
		fprintf(stderr, "cm_peer: %s status %d\n",
			rdma_event_str(ev->event), ev->status);
	if (p.one_by_one)
		return handle_one(ev, c);

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		/* A rejected or answered request has no use for its id. */
		return !answer_request(ev);
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(ev->id, 2000)) {
			p.failed++;
			return true;
		}
		return false;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (connect_conn(ev->id)) {
			p.failed++;
			return true;
		}
		return false;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		/* No QP to move: just complete the connection with an RTU. */
		if (rdma_establish(ev->id)) {
			p.failed++;
			return true;
		}
		c->state = ESTABLISHED;
		p.established++;
		return false;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (c && !listener) {
			c->state = ESTABLISHED;
			p.established++;
		}
		return false;
	case RDMA_CM_EVENT_DISCONNECTED:
		p.disconnected++;
		if (!p.server && !stop)
			p.lost++;
		/* Sends the DREP. */
		rdma_disconnect(ev->id);
		return true;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return false;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		p.errors++;
		if (!p.server && c && c->state != ESTABLISHED)
			p.failed++;
		else if (!p.server && !stop)
			p.lost++;
		return !listener;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return !listener;
	default:
		return false;
	}
}

/* Handle every queued event; returns false if the channel broke. */
static bool drain(int timeout_ms)
{
	struct pollfd pfd[2] = {
		{ .fd = p.ch->fd, .events = POLLIN },
		{ .fd = sigfd, .events = POLLIN },
	};
	struct signalfd_siginfo si;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct conn *c;
	bool destroy;

	if (poll(pfd, 2, timeout_ms) < 0)
		return errno == EINTR;
	if ((pfd[1].revents & POLLIN) &&
	    read(sigfd, &si, sizeof(si)) == sizeof(si))
		stop = true;
	while (!rdma_get_cm_event(p.ch, &ev)) {
		id = ev->id;
		destroy = handle(ev);
		c = id->context;
		rdma_ack_cm_event(ev);
		if (!destroy)
			continue;
		if (c >= p.conns && c < p.conns + MAX_CONNS && c->id == id)
			drop_conn(c);
		else
			rdma_destroy_id(id);
	}
	return errno == EAGAIN || errno == EINTR;
}

static struct rdma_addrinfo *resolve(bool passive)
{
	struct rdma_addrinfo hints = {
		.ai_flags = passive ? RAI_PASSIVE : 0,
		.ai_port_space = RDMA_PS_TCP,
	}, *res;

	if (rdma_getaddrinfo(p.addr, p.port, &hints, &res)) {
		perror("cm_peer: rdma_getaddrinfo");
		exit(1);
	}
	return res;
}

static void start_server(void)
{
	struct rdma_addrinfo *ai = resolve(true);
	enum rdma_port_space ps[2] = { RDMA_PS_TCP, RDMA_PS_UDP };
	unsigned int i;

	for (i = 0; i < (p.udp ? 2u : 1u); i++) {
		if (rdma_create_id(p.ch, &p.listen[i], NULL, ps[i]) ||
		    rdma_bind_addr(p.listen[i], ai->ai_src_addr) ||
		    rdma_listen(p.listen[i], 1024)) {
			perror("cm_peer: listen");
			exit(1);
		}
	}
	rdma_freeaddrinfo(ai);
	printf("cm_peer listening %s:%s%s\n", p.addr, p.port,
	       p.udp ? " (tcp, udp)" : "");
	fflush(stdout);
}

static void start_client(void)
{
	struct rdma_addrinfo *ai = resolve(false);
	struct rdma_cm_id *id;
	unsigned int i;

	if (p.one_by_one) {
		/* step_one() makes the connections. */
		p.ai = ai;
		return;
	}
	for (i = 0; i < p.n_conns; i++) {
		if (rdma_create_id(p.ch, &id, NULL, RDMA_PS_TCP)) {
			perror("cm_peer: rdma_create_id");
			exit(1);
		}
		new_conn(id);
		if (rdma_resolve_addr(id, NULL, ai->ai_dst_addr, 2000)) {
			perror("cm_peer: rdma_resolve_addr");
			exit(1);
		}
	}
	rdma_freeaddrinfo(ai);
}

/*
 * -1: end the connection in progress if its time is up, and start the
 * next one when it has gone; stop after the last.
 */
static void step_one(void)
{
	struct rdma_cm_id *id;

	if (p.cur && !ms_left()) {
		if (p.cur->state == ESTABLISHED) {
			ended(OUT_STAYED);
			rdma_disconnect(p.cur->id);
		} else {
			ended(OUT_FAILED);
		}
		drop_conn(p.cur);
	}
	if (p.cur)
		return;
	if (p.started == p.n_conns) {
		stop = true;
		return;
	}
	if (rdma_create_id(p.ch, &id, NULL, RDMA_PS_TCP)) {
		perror("cm_peer: rdma_create_id");
		exit(1);
	}
	p.cur = new_conn(id);
	p.started++;
	set_deadline(ANSWER_MS);
	if (rdma_resolve_addr(id, NULL, p.ai->ai_dst_addr, 2000)) {
		perror("cm_peer: rdma_resolve_addr");
		ended(OUT_FAILED);
		drop_conn(p.cur);
	}
}

static unsigned int live_conns(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < MAX_CONNS; i++)
		n += p.conns[i].state != FREE;
	return n;
}

/* A client disconnects what is left and waits a little for the DREPs. */
static void shut_down(void)
{
	unsigned int i;
	time_t end = time(NULL) + 5;

	if (!p.server) {
		for (i = 0; i < MAX_CONNS; i++)
			if (p.conns[i].state == ESTABLISHED)
				rdma_disconnect(p.conns[i].id);
		while (live_conns() && time(NULL) < end && drain(100))
			;
	}
	for (i = 0; i < MAX_CONNS; i++)
		drop_conn(&p.conns[i]);
	for (i = 0; i < 2; i++)
		if (p.listen[i])
			rdma_destroy_id(p.listen[i]);
	rdma_destroy_event_channel(p.ch);
	if (p.ai)
		rdma_freeaddrinfo(p.ai);
}

static void help(void)
{
	fprintf(stderr,
		"usage: cm_peer -s [-u] [-k N] [-x] -a ADDR -p PORT\n"
		"       cm_peer -c -n N -a ADDR -p PORT\n"
		"       cm_peer -c -1 [-w MS] -n N -a ADDR -p PORT\n");
	exit(2);
}

static void report(void)
{
	unsigned int i;

	printf("cm_peer connect_requests %lu\n", p.connect_requests);
	printf("cm_peer sidr_requests %lu\n", p.sidr_requests);
	printf("cm_peer accepted %lu\n", p.accepted);
	printf("cm_peer rejected %lu\n", p.rejected);
	printf("cm_peer established %lu\n", p.established);
	printf("cm_peer disconnected %lu\n", p.disconnected);
	printf("cm_peer errors %lu\n", p.errors);
	if (!p.server) {
		printf("cm_peer failed %lu\n", p.failed);
		printf("cm_peer lost %lu\n", p.lost);
	}
	printf("cm_peer unreachable %lu\n",
	       p.events[RDMA_CM_EVENT_UNREACHABLE]);
	printf("cm_peer rejected_events %lu\n",
	       p.events[RDMA_CM_EVENT_REJECTED]);
	printf("cm_peer connect_errors %lu\n",
	       p.events[RDMA_CM_EVENT_CONNECT_ERROR]);
	if (!p.one_by_one)
		return;
	printf("cm_peer started %u\n", p.started);
	printf("cm_peer establish_errors %lu\n", p.establish_errors);
	printf("cm_peer slowest_ms %ld\n", p.slowest_ms);
	for (i = 0; i < OUT_N_OUTCOMES; i++)
		printf("cm_peer %s %lu\n", outcome_names[i], p.outcomes[i]);
}

int main(int argc, char **argv)
{
	sigset_t sigs;
	int c, flags;

	p.wait_ms = 300;
	while ((c = getopt(argc, argv, "scua:p:n:k:xw:1v")) != -1) {
		switch (c) {
		case 's':
			p.server = true;
			break;
		case 'c':
			p.server = false;
			break;
		case 'u':
			p.udp = true;
			break;
		case 'a':
			p.addr = optarg;
			break;
		case 'p':
			p.port = optarg;
			break;
		case 'n':
			p.n_conns = (unsigned int)atoi(optarg);
			break;
		case 'k':
			p.accept_every = (unsigned int)atoi(optarg);
			break;
		case 'x':
			p.destroy_accepted = true;
			break;
		case 'w':
			p.wait_ms = (unsigned int)atoi(optarg);
			break;
		case '1':
			p.one_by_one = true;
			break;
		case 'v':
			p.verbose = true;
			break;
		default:
			help();
		}
	}
	if (!p.addr || !p.port || optind != argc ||
	    (!p.server && (!p.n_conns || p.n_conns > MAX_CONNS)) ||
	    (p.server && p.one_by_one))
		help();

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	sigfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	if (sigfd < 0) {
		perror("cm_peer: signalfd");
		return 1;
	}
	init_conns();
	p.ch = rdma_create_event_channel();
	if (!p.ch) {
		perror("cm_peer: rdma_create_event_channel");
		return 1;
	}
	flags = fcntl(p.ch->fd, F_GETFL);
	fcntl(p.ch->fd, F_SETFL, flags | O_NONBLOCK);

	if (p.server)
		start_server();
	else
		start_client();

	while (!stop) {
		if (p.one_by_one) {
			step_one();
			if (stop)
				break;
		}
		if (!drain(p.cur && ms_left() < 100 ? (int)ms_left() : 100)) {
			perror("cm_peer: rdma_get_cm_event");
			break;
		}
		if (!p.server && !p.one_by_one && !p.announced &&
		    p.established + p.failed >= p.n_conns) {
			printf("cm_peer established %lu of %u\n",
			       p.established, p.n_conns);
			fflush(stdout);
			p.announced = true;
		}
	}
	shut_down();
	report();
	if (p.one_by_one)
		return p.outcomes[OUT_STAYED] || p.outcomes[OUT_FAILED];
	return !p.server && p.established < p.n_conns;
}
