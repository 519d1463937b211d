# Redaction's share of a memorize through the real hmg-mcp (keyword-only, so
# the embedding does not hide it): the corpus texts holding credentials vs
# the same texts with each credential replaced by plain words of its length.
# 600 pipelined memorize calls per run, 5 alternating runs, median ms/call.
#   python3 benches/redaction-cost.py   (HMG_MCP=path/to/hmg-mcp to override)
import os, json, shutil, subprocess, time, tempfile, statistics
rows=[l.split('\t') for l in open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data/secrets/secrets.tsv')) if not l.startswith('#')]
un=lambda s: s.replace('\\n','\n').replace('\\t','\t').replace('\\\\','\\')
secret_texts=[]; plain_texts=[]
seen=set()
for r in rows:
    t,sec=un(r[2]),un(r[3].rstrip('\n'))
    if t in seen: continue
    seen.add(t)
    secret_texts.append(t)
    plain_texts.append(t.replace(sec, ("plain words " * 20)[:len(sec)]))
N=600
def run(texts):
    store=tempfile.mkdtemp()
    msgs=[json.dumps({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}),
          json.dumps({"jsonrpc":"2.0","method":"notifications/initialized"})]
    for i,t in enumerate(texts[:N]):
        msgs.append(json.dumps({"jsonrpc":"2.0","id":i+1,"method":"tools/call","params":{"name":"memory_memorize","arguments":{"content":f"{t} #{i}"}}}))
    p=subprocess.Popen([os.environ.get('HMG_MCP', os.path.expanduser('~/.cache/hmg/target/release/hmg-mcp')),'--store',store,'--model','none'],stdin=subprocess.PIPE,stdout=subprocess.PIPE,stderr=subprocess.DEVNULL,text=True)
    p.stdin.write(msgs[0]+"\n"); p.stdin.flush(); p.stdout.readline()
    p.stdin.write(msgs[1]+"\n"); p.stdin.flush()
    t0=time.perf_counter()
    p.stdin.write("\n".join(msgs[2:])+"\n"); p.stdin.flush()
    got=0
    while got<len(msgs)-2:
        line=p.stdout.readline()
        if not line: break
        if '"id"' in line: got+=1
    dt=time.perf_counter()-t0
    p.stdin.close(); p.wait()
    shutil.rmtree(store)
    return dt*1000/got
res={"secret":[], "plain":[]}
for k in range(5):
    res["plain"].append(run(plain_texts)); res["secret"].append(run(secret_texts))
for k,v in res.items(): print(k, "ms/memorize median", round(statistics.median(v),3), [round(x,3) for x in v])
