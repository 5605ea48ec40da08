// Hot: a hot recursive method and a second hot one taking an array of objects, for
// perfconv's JVMTI agent (testdata/record-java.sh, tests/e2e_java.sh).
public class Hot {
    static int fib(int n) {
        if (n < 2)
            return n;
        return fib(n - 1) + fib(n - 2);
    }

    static long sumLengths(String[] words) {
        long s = 0;
        for (int round = 0; round < 200; round++)
            for (String w : words)
                s += w.length() * round % 7;
        return s;
    }

    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 1.0;
        String[] words = new String[1000];
        for (int i = 0; i < words.length; i++)
            words[i] = Integer.toString(i * 7919);
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long total = 0;
        while (System.nanoTime() < end) {
            total += fib(25);
            total += sumLengths(words);
        }
        System.out.println(total);
    }
}
