/*
 * The claim / commit / release protocol of one partition, checked with SPIN.
 * README.md maps every step to the Go code and lists bounds and properties.
 *
 * ZooKeeper is one linearizable store: every request is one atomic step
 * (a Multi applies all of its operations or none). The requests of one
 * client are separate steps, so anything may happen between them.
 *
 * Flags (spin -a -DFLAG):
 *   N=2|3             instances (default 2)
 *   LIVE              liveness run: bounds that would block a claim become
 *                     assertions, so a cut-off is never mistaken for progress
 *   BUG_RELEASE_NOEPOCH   variant (a): release deletes the owner node with
 *                     its version (always 0) and without the epoch check
 *   BUG_NO_INDOUBT    variant (b): no in-doubt resolution; a failed version
 *                     check after a lost reply is always a conflict
 *   BUG_RESET_NOBUMP  variant (c): resets do not bump the epoch (today's
 *                     ResetOffsets); a re-created offset node reuses version 0
 *   OP_DEL_OFFSET     the operator deletes the offset node without a reset
 *                     (no epoch bump) while no owner node exists
 *   OP_SET_OFFSET     an unfenced SetData of the offset node (no epoch bump)
 *   OP_DEL_EPOCH      the operator deletes the epoch node while no owner
 *                     node exists
 *   OP_UNSAFE         the operator deletes offset / epoch nodes even while
 *                     an owner node exists
 *   DOUBT_ONE         keep one in-doubt record (the latest lost write) instead
 *                     of every value written at the expected version
 *   RELEASE_EPOCH_ONLY release only with the claim's epoch (after a moved
 *                     epoch the owner node of a live session is left behind)
 */

#ifndef N
#define N 2
#endif
#define OPR      N        /* writer id of the operator */
#define NOV      255      /* version -1: no node */
#define NOBODY   255
#define MAXOFF   3        /* offsets 0..MAXOFF */
#ifndef MAXSESS
#define MAXSESS  (N+2)    /* sessions ever: N + 2 expiries or restarts */
#endif
#ifndef MAXLOST
#define MAXLOST  2        /* replies lost */
#endif
#ifndef MAXRESET
#define MAXRESET 1        /* operator resets */
#endif
#ifndef MAXREB
#define MAXREB   1        /* rebalances (assignment moves) */
#endif
#ifndef MAXOPDEL
#define MAXOPDEL 1        /* operator deletions of nodes */
#endif
#ifndef ZB
#define ZB       1        /* steps a cut-off instance may still take */
#endif
#ifdef LIVE
#define MAXEPOCH 40
#define ROOM     true
#define CHECKROOM assert(ep_ver < MAXEPOCH && (!off_ex || off_ver < MAXVER))
#else
#define ROOM     (ep_ver < MAXEPOCH)
#define CHECKROOM skip
#define MAXEPOCH 8        /* epoch node versions 0..MAXEPOCH */
#endif
#define MAXVER   8        /* offset node versions */

/* ---------------- ZooKeeper ---------------- */
bool live[MAXSESS+1];      /* session s is live; 0 is no session */
byte sessInst[MAXSESS+1];  /* the instance that opened session s (ghost) */
byte sess[N];              /* the session instance i's client runs now */
byte nextSess = 1;

bool own_ex; byte own_data; byte own_eph;   /* owner node, version always 0 */
bool ep_ex;  byte ep_ver;                   /* epoch node */
bool off_ex; byte off_val; byte off_ver; byte off_czx; /* offset node */
byte czxids;                                /* offset node creations */

/* ---------------- environment ---------------- */
byte assigned;             /* the instance the partition is assigned to */
byte nlost, nreset, nreb, nopdel;

/* ---------------- ghosts ---------------- */
byte latestI = NOBODY, latestS, latestE; /* the latest claim: instance, session, epoch */
bool doubtApplied[N];      /* i's in-doubt write is the offset node's last write */
byte resetGen, seenGen[N]; /* resets ever; the reset i has read the offset after */

/* ---------------- instances ---------------- */
mtype = { IDLE, CLAIM, CPOST, REPOCH, ROWNER, RBUMP, RSTALE, READOFF, OWN,
          CONFREAD, DREAD, DEPOCH, RELEPR, RELGET, RELEP, RELDEL };
mtype st[N];
byte cE[N], cSid[N];       /* the claim: epoch, session */
byte tsid[N], tev[N];      /* a claim attempt: its session, the epoch read */
byte pos[N];               /* next offset to consume (marked) */
bool dirty[N];             /* pos not committed yet */
byte ver[N], czx[N];       /* offset node version expected, its czxid (0 unknown) */
bool dfl[N];               /* a write is in doubt */
byte dmask[N], dver[N], dczx[N]; /* its values (bit set), expected version, czxid */
byte zb[N];                /* steps left once the claim's session is gone */
bool rex[N]; byte rv[N], rver[N], rczx[N]; /* an offset node read */
bool rda[N], rgen[N];      /* at that read: doubtApplied[i], no reset unread (ghosts) */

#define zombie(i)   (cSid[i] != sess[i])
#define canAct(i)   (!zombie(i) || zb[i] > 0)
#define useBudget(i) if :: zombie(i) -> zb[i]-- :: else -> skip fi
#define nextVer(v)  ((v) == NOV -> 0 : (v) + 1)

/* a lost reply: the instance cannot tell whether its request applied */
#define loseReply(l) if :: nlost < MAXLOST -> nlost++; l = 1 :: true -> l = 0 fi

inline clearDoubt(i) {
	dfl[i] = 0; dmask[i] = 0; dver[i] = 0; dczx[i] = 0; doubtApplied[i] = 0
}

inline clearRead(i) {
	rex[i] = 0; rv[i] = 0; rver[i] = 0; rczx[i] = 0; rda[i] = 0; rgen[i] = 0
}

/* drop the claim: no commit, no release */
inline toIdle(i) {
	st[i] = IDLE; cE[i] = 0; cSid[i] = 0; tsid[i] = 0; tev[i] = 0;
	pos[i] = 0; dirty[i] = 0; ver[i] = 0; czx[i] = 0; zb[i] = 0;
	seenGen[i] = 0;
	clearDoubt(i); clearRead(i)
}

/* any other write to the offset node: no in-doubt write is its last */
inline otherWrite() {
	byte k = 0;
	do
	:: k < N -> doubtApplied[k] = 0; k++
	:: else -> break
	od;
	k = 0
}

inline newSession(i) {
	live[nextSess] = 1; sessInst[nextSess] = i; sess[i] = nextSess; nextSess++
}

/* session s ends: ZooKeeper deletes its ephemeral nodes */
inline expire(s) {
	live[s] = 0;
	if
	:: own_ex && own_eph == s -> own_ex = 0; own_data = 0; own_eph = 0
	:: else -> skip
	fi
}

#ifdef RELEASE_EPOCH_ONLY
/* release fenced by the claim's epoch; a moved epoch ends it (ErrClaimLost)
 * and a lost claim releases nothing */
#define RELFIRST     RELGET
#define RELCHECK(i)  cE[i]
#define RELMOVED(i)  toIdle(i)
inline claimLost(i) { toIdle(i) }
#else
/* release fenced by the epoch read just before the owner node: the node is
 * deleted while it is ours (our session, our id), also after a lost claim */
#define RELFIRST     RELEPR
#define RELCHECK(i)  tev[i]
#define RELMOVED(i)  st[i] = RELEPR
inline claimLost(i) {
	if
	:: zombie(i) -> toIdle(i)
	:: else -> dirty[i] = 0; clearDoubt(i); clearRead(i); st[i] = RELEPR
	fi
}
#endif

/* the claim holds from here: state of a fresh claim (epoch e, session s) */
inline gotClaim(i, e, s) {
	cE[i] = e; cSid[i] = s; zb[i] = ZB;
	tev[i] = 0; st[i] = CPOST
}

proctype Instance(byte i)
{
	bool l;
	byte e;
end:
	do
	/* ---- Claim: Multi(Create(owner, EPHEMERAL, id), SetData(epoch, -1)) ---- */
	:: atomic { st[i] == IDLE && assigned == i -> st[i] = CLAIM }
	:: atomic { st[i] == CLAIM && (!ep_ex || own_ex || ROOM) ->
		tsid[i] = sess[i];
		if
		:: !ep_ex -> ep_ex = 1; ep_ver = 0      /* NoNode: ensureNode(epoch), again */
		:: ep_ex && own_ex -> st[i] = REPOCH    /* NodeExists: resolveClaimed */
		:: ep_ex && !own_ex ->
			CHECKROOM;
			own_ex = 1; own_data = i; own_eph = sess[i]; ep_ver++;
			latestI = i; latestS = sess[i]; latestE = ep_ver;
			loseReply(l);
			if
			:: l -> l = 0; tsid[i] = 0      /* an error: the claim loop tries again */
			:: else -> gotClaim(i, ep_ver, tsid[i])
			fi
		fi }
	/* if kz.SessionID() != sid: the session was replaced, whose node is it? */
	:: atomic { st[i] == CPOST ->
		if
		:: sess[i] == cSid[i] -> st[i] = READOFF; tsid[i] = 0
		:: else -> toIdle(i); st[i] = CLAIM
		fi }
	/* ---- resolveClaimed: read the epoch, then the owner ---- */
	:: atomic { st[i] == REPOCH ->
		if
		:: !ep_ex -> ep_ex = 1; ep_ver = 0; st[i] = CLAIM; tsid[i] = 0
		:: else -> tev[i] = ep_ver; st[i] = ROWNER
		fi }
	:: atomic { st[i] == ROWNER ->
		if
		:: !own_ex -> st[i] = CLAIM; tsid[i] = 0; tev[i] = 0          /* the owner left */
		:: own_ex && own_data == i && own_eph == tsid[i] -> st[i] = RBUMP /* ours */
		:: own_ex && own_data == i && own_eph != tsid[i] -> st[i] = RSTALE /* older session of ours */
		:: own_ex && own_data != i -> st[i] = CLAIM; tsid[i] = 0; tev[i] = 0 /* other's: back off */
		fi }
	/* ours: Multi(Check(owner, version), SetData(epoch, version read)) */
	:: atomic { st[i] == RBUMP && (ROOM || !(own_ex && ep_ex && ep_ver == tev[i])) ->
		if
		:: own_ex && ep_ex && ep_ver == tev[i] ->
			CHECKROOM;
			ep_ver++; latestI = i; latestS = sess[i]; latestE = ep_ver;
			loseReply(l);
			if
			:: l -> l = 0; st[i] = CLAIM; tsid[i] = 0; tev[i] = 0
			:: else -> gotClaim(i, ep_ver, tsid[i])
			fi
		:: else -> st[i] = CLAIM; tsid[i] = 0; tev[i] = 0
		fi }
	/* stale: Multi(Check(epoch, version read), Delete(owner, version)) */
	:: atomic { st[i] == RSTALE ->
		if
		:: own_ex && ep_ex && ep_ver == tev[i] ->
			/* (3) only our own node of an older session of ours */
			assert(own_data == i && sessInst[own_eph] == i && own_eph != tsid[i]);
			own_ex = 0; own_data = 0; own_eph = 0
		:: else -> skip
		fi;
		st[i] = CLAIM; tsid[i] = 0; tev[i] = 0 }

	/* ---- the worker reads the committed offset (FetchOffsetVersion) ---- */
	:: atomic { st[i] == READOFF ->
		if
		:: off_ex -> pos[i] = off_val; ver[i] = off_ver; czx[i] = off_czx
		:: else -> pos[i] = 0; ver[i] = NOV; czx[i] = 0
		fi;
		seenGen[i] = resetGen; st[i] = OWN }

	/* ---- deliver and mark one message (stopped once the session is gone, after ZB steps) ---- */
	:: atomic { st[i] == OWN && assigned == i && pos[i] < MAXOFF && canAct(i) ->
		useBudget(i); pos[i]++; dirty[i] = 1 }

	/* ---- commit: Multi(Check(epoch, E), SetData(offset, v)) or Create when v == -1 ---- */
	:: atomic { st[i] == OWN && dirty[i] && canAct(i) && (!off_ex || off_ver < MAXVER) ->
		useBudget(i);
		if
		:: !ep_ex || ep_ver != cE[i] -> e = 1             /* the epoch moved */
		:: else ->
			if
			:: ver[i] == NOV && !off_ex -> e = 0
			:: ver[i] != NOV && off_ex && off_ver == ver[i] -> e = 0
			:: else -> e = 2                              /* the offset node moved */
			fi
		fi;
		loseReply(l);
		if
		:: e == 0 ->
			/* (1) only the latest claim commits */
			assert(latestI == i && latestS == cSid[i] && latestE == cE[i]);
			/* (2) no decrease, and never over a reset we have not read */
			assert(!off_ex || pos[i] >= off_val);
			assert(seenGen[i] == resetGen);
			otherWrite();
			off_val = pos[i];
			if
			:: ver[i] == NOV -> off_ex = 1; off_ver = 0; czxids++; off_czx = czxids
			:: else -> off_ver++
			fi
		:: else -> skip
		fi;
		if
		:: l ->                        /* in doubt: remember what it would have written */
			l = 0;
#ifdef DOUBT_ONE
			if
			:: dfl[i] && dver[i] == ver[i] -> dmask[i] = 0
			:: else -> skip
			fi;
#endif
			dfl[i] = 1; dmask[i] = dmask[i] | (1 << pos[i]); dver[i] = ver[i]; dczx[i] = czx[i];
			if :: e == 0 -> doubtApplied[i] = 1 :: else -> skip fi
		:: !l && e == 0 ->
			ver[i] = off_ver;
			if :: ver[i] == 0 -> czx[i] = 0 :: else -> skip fi; /* a create returns no Stat */
			dirty[i] = 0; clearDoubt(i)
		:: !l && e == 1 -> claimLost(i)                  /* ErrClaimLost: stop */
		:: !l && e == 2 ->
#ifdef BUG_NO_INDOUBT
			st[i] = CONFREAD
#else
			if :: dfl[i] -> st[i] = DREAD :: else -> st[i] = CONFREAD fi
#endif
		fi;
		e = 0 }

	/* ---- conflict: read the stored offset, adopt it, seek, report ---- */
	:: atomic { st[i] == CONFREAD ->
		/* (4) a conflict is reported only when someone else wrote */
		assert(!doubtApplied[i]);
		if
		:: off_ex -> pos[i] = off_val; ver[i] = off_ver; czx[i] = off_czx
		:: else -> pos[i] = 0; ver[i] = NOV; czx[i] = 0
		fi;
		dirty[i] = 0; seenGen[i] = resetGen; clearDoubt(i); st[i] = OWN }

	/* ---- in-doubt resolution: read the offset node, then the epoch ---- */
	:: atomic { st[i] == DREAD ->
		rex[i] = off_ex; rv[i] = off_val; rver[i] = off_ver; rczx[i] = off_czx;
		rda[i] = doubtApplied[i]; rgen[i] = (resetGen == seenGen[i]);
		if :: !off_ex -> rv[i] = 0; rver[i] = 0; rczx[i] = 0 :: else -> skip fi;
		st[i] = DEPOCH }
	:: atomic { st[i] == DEPOCH ->
		if
		:: !ep_ex || ep_ver != cE[i] -> claimLost(i)
		:: else ->
			if
			:: rex[i] && rver[i] == nextVer(dver[i]) && (dmask[i] & (1 << rv[i])) &&
			   (dczx[i] == 0 || dczx[i] == rczx[i]) ->
				/* (4) resolved as ours only if it was ours */
				assert(rda[i] && rgen[i]);
				ver[i] = rver[i]; czx[i] = rczx[i];
				dirty[i] = (pos[i] != rv[i]);
				clearDoubt(i)
			:: else ->                                            /* a real conflict */
				assert(!rda[i]);
				if
				:: rex[i] -> pos[i] = rv[i]; ver[i] = rver[i]; czx[i] = rczx[i]
				:: else -> pos[i] = 0; ver[i] = NOV; czx[i] = 0
				fi;
				dirty[i] = 0; seenGen[i] = resetGen; clearDoubt(i)
			fi;
			st[i] = OWN
		fi;
		clearRead(i) }

	/* ---- the manage loop learns the session was replaced: drop, no commit, no release ---- */
	:: atomic { zombie(i) && (st[i] == OWN || st[i] == CONFREAD || st[i] == DREAD ||
	            st[i] == DEPOCH || st[i] == READOFF) -> toIdle(i) }

	/* ---- Release: not assigned any more; skipped if the session is gone ---- */
	:: atomic { st[i] == OWN && assigned != i ->
		if
		:: zombie(i) -> toIdle(i)
		:: else -> st[i] = RELFIRST
		fi }
#ifndef RELEASE_EPOCH_ONLY
	/* the epoch first: any claim after this read moves it */
	:: atomic { st[i] == RELEPR ->
		tev[i] = ep_ver; if :: !ep_ex -> tev[i] = NOV :: else -> skip fi;
		st[i] = RELGET }
#endif
	:: atomic { st[i] == RELGET ->
		if
		:: !own_ex -> st[i] = RELEP
		:: own_ex && (own_data != i || own_eph != cSid[i]) -> toIdle(i) /* not ours: ErrClaimLost */
		:: own_ex && own_data == i && own_eph == cSid[i] -> st[i] = RELDEL
		fi }
	:: atomic { st[i] == RELEP -> toIdle(i) }  /* gone: released (epoch == E) or lost */
	/* Multi(Check(epoch, E or the version read), Delete(owner, version)) */
	:: atomic { st[i] == RELDEL ->
		if
#ifdef BUG_RELEASE_NOEPOCH
		:: own_ex ->
#else
		:: own_ex && ep_ex && ep_ver == RELCHECK(i) ->
#endif
			/* (3) only our own node */
			assert(own_data == i && own_eph == cSid[i]);
			own_ex = 0; own_data = 0; own_eph = 0;
			loseReply(l);
			if
			:: l -> l = 0; st[i] = RELGET   /* retried: finds it gone */
			:: else -> toIdle(i)
			fi
#ifndef BUG_RELEASE_NOEPOCH
		:: own_ex && !(ep_ex && ep_ver == RELCHECK(i)) -> RELMOVED(i)
#endif
		:: !own_ex -> st[i] = RELGET
		fi }

	/* ---- the process crashes and restarts: new session, the old one lives on ---- */
	:: atomic { nextSess <= MAXSESS && st[i] != IDLE -> toIdle(i); newSession(i) }
	od
}

/* Operator, assignment and session expiry: each bounded. */
#ifdef OP_UNSAFE
#define OPOK true
#else
#define OPOK (!own_ex)     /* no owner node exists */
#endif
proctype Env()
{
	byte j;
end:
	do
	/* a rebalance moves the partition */
	:: atomic { nreb < MAXREB -> nreb++; assigned = (assigned + 1) % N }
	/* instance j's session expires; its client opens a new one */
	:: atomic { nextSess <= MAXSESS ->
		if
		:: j = 0
		:: j = 1
#if N > 2
		:: j = 2
#endif
		fi;
		expire(sess[j]); newSession(j); j = 0 }
	/* reset: Multi(Delete(offset) | SetData(offset) | re-create, SetData(epoch, -1)) */
	:: atomic { nreset < MAXRESET && ep_ex && ep_ver < MAXEPOCH ->
		nreset++; resetGen++;
		otherWrite();
		if
		:: off_ex -> off_ex = 0; off_val = 0; off_ver = 0; off_czx = 0   /* ResetOffsets */
		:: off_ex && off_ver < MAXVER -> off_val = MAXOFF; off_ver++      /* set */
		:: !off_ex -> off_ex = 1; off_val = MAXOFF; off_ver = 0; czxids++; off_czx = czxids /* create */
		:: off_ex -> off_val = MAXOFF; off_ver = 0; czxids++; off_czx = czxids /* delete + create */
		fi;
#ifndef BUG_RESET_NOBUMP
		ep_ver++
#else
		skip
#endif
		}
#ifdef OP_DEL_OFFSET
	/* the operator deletes the offset node without bumping the epoch */
	:: atomic { nopdel < MAXOPDEL && off_ex && OPOK -> nopdel++; resetGen++; otherWrite();
		off_ex = 0; off_val = 0; off_ver = 0; off_czx = 0 }
#endif
#ifdef OP_SET_OFFSET
	/* an unfenced write of the offset (CommitOffset, an operator tool): no epoch bump */
	:: atomic { nopdel < MAXOPDEL && off_ex && off_ver < MAXVER -> nopdel++; resetGen++; otherWrite();
		if :: off_val = 0 :: off_val = MAXOFF fi; off_ver++ }
#endif
#ifdef OP_DEL_EPOCH
	/* the operator deletes the epoch node */
	:: atomic { nopdel < MAXOPDEL && ep_ex && OPOK -> nopdel++; ep_ex = 0; ep_ver = 0 }
#endif
	od
}

/* ZooKeeper expires the sessions of crashed processes (no heartbeats). */
#define orphan(s) (live[s] && s != sess[0] && s != sess[1] && s != sess[N-1])
proctype Reaper()
{
end:
	do
	:: atomic { orphan(1) -> expire(1) }
	:: atomic { orphan(2) -> expire(2) }
#if MAXSESS > 2
	:: atomic { orphan(3) -> expire(3) }
#endif
#if MAXSESS > 3
	:: atomic { orphan(4) -> expire(4) }
#endif
#if MAXSESS > 4
	:: atomic { orphan(5) -> expire(5) }
#endif
#if MAXSESS > 5
	:: atomic { orphan(6) -> expire(6) }
#endif
	od
}

init {
	atomic {
		byte k = 0;
		do
		:: k < N -> newSession(k); st[k] = IDLE; k++
		:: else -> break
		od;
		k = 0;
		run Env();
		run Reaper();
		k = 0;
		do
		:: k < N -> run Instance(k); k++
		:: else -> break
		od;
		k = 0
	}
}

/* liveness: once the faults are spent, the assigned instance owns the partition */
#define owned (own_ex && own_data == assigned && st[assigned] == OWN)
#ifdef LIVE
ltl live { <> [] owned }
#endif
