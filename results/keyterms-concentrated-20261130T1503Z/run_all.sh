cd /work/main
B() { SEMANNO_DATA=$1 .venv/bin/python -m bench.keyterms --corpus $2 --clustering $3 --against concentrated --top 5 --repeat 3 --show 20 ${4:+--class-column $4}; }
B /tmp/walk/data stackoverflow kmeans-k100 label_name
B /tmp/walk/data crisis kmeans-k118 label
B /tmp/walk2/data troll kmeans-k141
B /tmp/walk/data politici kmeans-k78
